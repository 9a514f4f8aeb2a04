"""trace_feedback: one rating per user and run (unique run_id, user_id) and an updated_at for edits

Before, every thumbs was a new row and the latest one counted. This keeps only each user's latest row per run,
adds `updated_at` (set to `created_at` for existing rows) and the unique constraint the upsert relies on. The
downgrade drops both; the rows deleted by the upgrade were superseded and are not restored.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-10 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

feedback = sa.table(
    "trace_feedback",
    sa.column("id", sa.String()),
    sa.column("run_id", sa.String()),
    sa.column("user_id", sa.String()),
    sa.column("created_at", sa.DateTime(timezone=True)),
    sa.column("updated_at", sa.DateTime(timezone=True)),
)


def upgrade() -> None:
    connection = op.get_bind()
    order = (feedback.c.created_at, feedback.c.id)
    latest: dict[tuple[str, str], str] = {}
    superseded: list[str] = []
    for row_id, run_id, user_id in connection.execute(
        sa.select(feedback.c.id, feedback.c.run_id, feedback.c.user_id).order_by(*order)
    ).all():
        previous = latest.get((run_id, user_id))
        if previous is not None:
            superseded.append(previous)
        latest[(run_id, user_id)] = row_id
    for start in range(0, len(superseded), 500):
        connection.execute(feedback.delete().where(feedback.c.id.in_(superseded[start : start + 500])))
    with op.batch_alter_table("trace_feedback", schema=None) as batch_op:
        batch_op.add_column(sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True))
    connection.execute(feedback.update().values(updated_at=feedback.c.created_at))
    with op.batch_alter_table("trace_feedback", schema=None) as batch_op:
        batch_op.alter_column("updated_at", existing_type=sa.DateTime(timezone=True), nullable=False)
        batch_op.create_unique_constraint(batch_op.f("uq_trace_feedback_run_id_user_id"), ["run_id", "user_id"])


def downgrade() -> None:
    with op.batch_alter_table("trace_feedback", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_trace_feedback_run_id_user_id"), type_="unique")
        batch_op.drop_column("updated_at")
