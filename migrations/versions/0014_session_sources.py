"""session_sources: the context sources a session holds, given to every later turn until removed

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "session_sources",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("session_id", sa.String(length=32), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("label", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=500), nullable=False),
        sa.Column("document", sa.String(length=255), nullable=False),
        sa.Column("clone", sa.String(length=255), nullable=True),
        sa.Column("attachment_id", sa.String(length=32), nullable=True),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("ref", sa.String(length=255), nullable=True),
        sa.Column("path", sa.Text(), nullable=True),
        sa.Column("media_type", sa.String(length=255), nullable=True),
        sa.Column("chars", sa.BigInteger(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=True),
        sa.Column("truncated", sa.Boolean(), nullable=False),
        sa.Column("turn_index", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(length=32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("kind IN ('text', 'file', 'url', 'repo', 'path')", name=op.f("ck_session_sources_kind")),
        sa.ForeignKeyConstraint(
            ["session_id"], ["sessions.id"], name=op.f("fk_session_sources_session_id_sessions"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_session_sources")),
        sa.UniqueConstraint("session_id", "key", name=op.f("uq_session_sources_session_id_key")),
    )


def downgrade() -> None:
    op.drop_table("session_sources")
