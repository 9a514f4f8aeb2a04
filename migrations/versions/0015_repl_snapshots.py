"""repl_blobs / repl_snapshots / run_requests: per-iteration REPL snapshots (values once per content hash) and the
request a run started with, so a fork keeps the REPL and an interrupted run can be resumed

Revision ID: 0015
Revises: 0014
Create Date: 2027-01-10 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "repl_blobs",
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("hash", name=op.f("pk_repl_blobs")),
    )
    op.create_table(
        "repl_snapshots",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("run_id", sa.String(length=32), nullable=False),
        sa.Column("actor", sa.String(length=255), nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("iteration", sa.Integer(), nullable=False),
        sa.Column("variables", sa.JSON(), nullable=False),
        sa.Column("skipped", sa.JSON(), nullable=False),
        sa.Column("cell", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_repl_snapshots_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_repl_snapshots")),
    )
    with op.batch_alter_table("repl_snapshots", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_repl_snapshots_run_id_actor_iteration"), ["run_id", "actor", "iteration"], unique=False
        )
    op.create_table(
        "run_requests",
        sa.Column("run_id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=64), nullable=False),
        sa.Column("turn_input", sa.JSON(), nullable=False),
        sa.Column("resumes", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_run_requests_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_run_requests")),
    )


def downgrade() -> None:
    op.drop_table("run_requests")
    with op.batch_alter_table("repl_snapshots", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_repl_snapshots_run_id_actor_iteration"))
    op.drop_table("repl_snapshots")
    op.drop_table("repl_blobs")
