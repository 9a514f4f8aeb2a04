"""optimization_runs.owner and heartbeat_at: optimization runs are jobs like turns (claimed, beating, swept)

Revision ID: 0009
Revises: 0007
Create Date: 2026-12-02 00:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("optimization_runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owner", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("optimization_runs", schema=None) as batch_op:
        batch_op.drop_column("heartbeat_at")
        batch_op.drop_column("owner")
