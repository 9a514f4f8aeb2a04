"""optimization: durable cancel and per-example results on optimization_runs; promotion time on program_versions

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 12:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("optimization_runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("cancel_requested_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("results", sa.JSON(none_as_null=True), nullable=True))
    with op.batch_alter_table("program_versions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("promoted_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("program_versions", schema=None) as batch_op:
        batch_op.drop_column("promoted_at")
    with op.batch_alter_table("optimization_runs", schema=None) as batch_op:
        batch_op.drop_column("results")
        batch_op.drop_column("cancel_requested_at")
