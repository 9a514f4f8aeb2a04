"""runs.claim_epoch, queue_workers: queue execution's fenced claims and its workers

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-10 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("claim_epoch", sa.Integer(), nullable=False, server_default=sa.text("0")))
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.alter_column("claim_epoch", server_default=None)
    op.create_table(
        "queue_workers",
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("queue_worker_id", sa.BigInteger(), nullable=True),
        sa.Column("optimization_worker_id", sa.BigInteger(), nullable=True),
        sa.Column("turn_slots", sa.Integer(), nullable=False),
        sa.Column("optimization_slots", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_queue_workers")),
    )


def downgrade() -> None:
    op.drop_table("queue_workers")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("claim_epoch")
