"""recorded LM traffic of runs (run_recordings, lm_recordings, content-addressed lm_blobs) and replay_sets

Nothing existing changes: new tables only, so upgrading keeps every run (old runs simply have no recording).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 23:14:26.734902
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "lm_blobs",
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("hash", name=op.f("pk_lm_blobs")),
    )
    op.create_table(
        "replay_sets",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("run_ids", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_replay_sets_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_replay_sets")),
        sa.UniqueConstraint("user_id", "name", name=op.f("uq_replay_sets_user_id_name")),
    )
    op.create_table(
        "lm_recordings",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("run_id", sa.String(length=32), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("actor", sa.String(length=255), nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("request_hash", sa.String(length=64), nullable=False),
        sa.Column("response_hash", sa.String(length=64), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("truncated", sa.Boolean(), nullable=False),
        sa.Column("lm_params", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_lm_recordings_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lm_recordings")),
        sa.UniqueConstraint("run_id", "seq", name=op.f("uq_lm_recordings_run_id_seq")),
    )
    with op.batch_alter_table("lm_recordings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_lm_recordings_request_hash"), ["request_hash"], unique=False)

    op.create_table(
        "run_recordings",
        sa.Column("run_id", sa.String(length=32), nullable=False),
        sa.Column("inputs", sa.JSON(), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("truncated", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=True),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_run_recordings_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_run_recordings")),
    )


def downgrade() -> None:
    op.drop_table("run_recordings")
    with op.batch_alter_table("lm_recordings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lm_recordings_request_hash"))

    op.drop_table("lm_recordings")
    op.drop_table("replay_sets")
    op.drop_table("lm_blobs")
