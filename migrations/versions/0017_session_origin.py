"""sessions.origin: who made a session (`user`, or `bench` for a generated one); generated ones are hidden from
the default session list

Revision ID: 0017
Revises: 0016
Create Date: 2027-01-20 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("origin", sa.String(length=16), nullable=False, server_default="user"))
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.alter_column("origin", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("origin")
