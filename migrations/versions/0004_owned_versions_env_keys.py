"""per-user program versions (owner + promotions by scope) and server-env key references on llm_profiles

Existing promotions were global, so they become global promotions (every user keeps running what ran before);
existing versions get the owner of the optimization run that saved them.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 21:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("llm_profiles", schema=None) as batch_op:
        batch_op.add_column(sa.Column("key_source", sa.String(length=32), nullable=True))
    op.create_table(
        "program_promotions",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("version_id", sa.String(length=32), nullable=False),
        sa.Column("module", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=True),
        sa.Column("promoted_by", sa.String(length=32), nullable=True),
        sa.Column("promoted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("withdrawn_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["promoted_by"], ["users.id"], name=op.f("fk_program_promotions_promoted_by_users"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_program_promotions_user_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["program_versions.id"],
            name=op.f("fk_program_promotions_version_id_program_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_program_promotions")),
    )
    with op.batch_alter_table("program_promotions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_program_promotions_module"), ["module"], unique=False)
        batch_op.create_index(batch_op.f("ix_program_promotions_user_id"), ["user_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_program_promotions_version_id"), ["version_id"], unique=False)
    with op.batch_alter_table("program_versions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("user_id", sa.String(length=32), nullable=True))
        batch_op.create_index(batch_op.f("ix_program_versions_user_id"), ["user_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_program_versions_user_id_users"), "users", ["user_id"], ["id"], ondelete="SET NULL"
        )
    op.execute(
        "INSERT INTO program_promotions (id, version_id, module, user_id, promoted_by, promoted_at, withdrawn_at) "
        "SELECT id, id, module, NULL, NULL, promoted_at, NULL FROM program_versions WHERE promoted_at IS NOT NULL"
    )
    op.execute(
        "UPDATE program_versions SET user_id = (SELECT r.user_id FROM optimization_runs r "
        "WHERE r.program_version = program_versions.version AND r.module = program_versions.module "
        "ORDER BY r.created_at LIMIT 1)"
    )
    with op.batch_alter_table("program_versions", schema=None) as batch_op:
        batch_op.drop_column("promoted_at")
        batch_op.drop_column("promoted")


def downgrade() -> None:
    with op.batch_alter_table("program_versions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("promoted", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column("promoted_at", sa.DateTime(timezone=True), nullable=True))
    op.execute(
        "UPDATE program_versions SET promoted_at = (SELECT MAX(p.promoted_at) FROM program_promotions p "
        "WHERE p.version_id = program_versions.id AND p.user_id IS NULL AND p.withdrawn_at IS NULL)"
    )
    with op.batch_alter_table("program_versions", schema=None) as batch_op:
        batch_op.alter_column("promoted", server_default=None)
        batch_op.drop_constraint(batch_op.f("fk_program_versions_user_id_users"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_program_versions_user_id"))
        batch_op.drop_column("user_id")
    with op.batch_alter_table("program_promotions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_program_promotions_version_id"))
        batch_op.drop_index(batch_op.f("ix_program_promotions_user_id"))
        batch_op.drop_index(batch_op.f("ix_program_promotions_module"))
    op.drop_table("program_promotions")
    with op.batch_alter_table("llm_profiles", schema=None) as batch_op:
        batch_op.drop_column("key_source")
