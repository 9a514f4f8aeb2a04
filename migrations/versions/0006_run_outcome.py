"""runs.outcome (complete | partial) and runs.stop_reason: a succeeded run that a budget stopped is partial

Existing succeeded runs are complete, unless the root actor emitted a `budget_exhausted` event: then they are
partial, stopped by the budget that event names (the latest one).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 23:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("outcome", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("stop_reason", sa.String(length=64), nullable=True))
        batch_op.create_check_constraint(op.f("ck_runs_outcome"), "outcome IN ('complete', 'partial')")
    budget = (
        "e.payload->>'budget'" if op.get_bind().dialect.name == "postgresql" else "json_extract(e.payload, '$.budget')"
    )
    last_stop = (
        f"SELECT {budget} FROM run_events e WHERE e.run_id = runs.id AND e.type = 'budget_exhausted' AND e.depth = 0 "
        "ORDER BY e.seq DESC LIMIT 1"
    )
    op.execute(f"UPDATE runs SET stop_reason = ({last_stop}) WHERE status = 'succeeded'")
    op.execute(
        "UPDATE runs SET outcome = CASE WHEN stop_reason IS NULL THEN 'complete' ELSE 'partial' END "
        "WHERE status = 'succeeded'"
    )


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_runs_outcome"), type_="check")
        batch_op.drop_column("stop_reason")
        batch_op.drop_column("outcome")
