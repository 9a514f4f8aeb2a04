"""runs.trace_id / runs.span_id: the OpenTelemetry trace each run is exported as

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 23:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("trace_id", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("span_id", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("span_id")
        batch_op.drop_column("trace_id")
