"""sessions.forked_from_id / forked_after_turn: a fork records the session and turn it was made from

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 23:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("forked_from_id", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("forked_after_turn", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_sessions_forked_from_id"), ["forked_from_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sessions_forked_from_id"))
        batch_op.drop_column("forked_after_turn")
        batch_op.drop_column("forked_from_id")
