"""Optimization datasets (rows inline as JSON) and the rated runs that feedback datasets are built from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import Dataset, Run, TraceFeedback, Turn


async def create_dataset(
    session: AsyncSession, *, user_id: str, module: str, name: str, rows: list[dict[str, Any]]
) -> Dataset:
    """Insert a dataset; the (user, module, name) uniqueness is the caller's to check (see get_dataset_by_name)."""
    row = Dataset(user_id=user_id, module=module, name=name, rows=rows, row_count=len(rows))
    session.add(row)
    await session.flush()
    return row


async def get_dataset(session: AsyncSession, *, dataset_id: str, user_id: str) -> Dataset | None:
    result = await session.execute(
        select(Dataset).where(col(Dataset.id) == dataset_id, col(Dataset.user_id) == user_id)
    )
    return result.scalars().first()


async def get_dataset_by_name(session: AsyncSession, *, user_id: str, module: str, name: str) -> Dataset | None:
    result = await session.execute(
        select(Dataset).where(col(Dataset.user_id) == user_id, col(Dataset.module) == module, col(Dataset.name) == name)
    )
    return result.scalars().first()


async def list_datasets(session: AsyncSession, *, user_id: str, module: str | None = None) -> list[Dataset]:
    """Newest first."""
    stmt = select(Dataset).where(col(Dataset.user_id) == user_id)
    if module is not None:
        stmt = stmt.where(col(Dataset.module) == module)
    result = await session.execute(stmt.order_by(col(Dataset.created_at).desc(), col(Dataset.id)))
    return list(result.scalars())


async def delete_dataset(session: AsyncSession, *, dataset_id: str, user_id: str) -> bool:
    row = await get_dataset(session, dataset_id=dataset_id, user_id=user_id)
    if row is None:
        return False
    await session.delete(row)
    await session.flush()
    return True


@dataclass(frozen=True)
class RatedRun:
    """A run the user rated, with its turn's question and answer and the user's latest feedback."""

    run_id: str
    session_id: str
    execution_mode: str
    task: str
    answer: str
    rating: str
    expected_answer: str | None


async def list_rated_runs(
    session: AsyncSession, *, user_id: str, session_ids: list[str] | None = None, limit: int = 5000
) -> list[RatedRun]:
    """The user's runs with feedback, latest feedback per run, oldest run first."""
    stmt = (
        select(TraceFeedback, Run, Turn)
        .join(Run, col(Run.id) == col(TraceFeedback.run_id))
        .join(Turn, col(Turn.id) == col(Run.turn_id))
        .where(col(TraceFeedback.user_id) == user_id, col(Run.user_id) == user_id)
        .order_by(col(TraceFeedback.created_at), col(TraceFeedback.id))
    )
    if session_ids:
        stmt = stmt.where(col(Run.session_id).in_(session_ids))
    latest: dict[str, RatedRun] = {}
    for feedback, run, turn in (await session.execute(stmt.limit(limit))).all():
        latest[run.id] = RatedRun(
            run_id=run.id,
            session_id=run.session_id,
            execution_mode=run.execution_mode,
            task=turn.user_message,
            answer=turn.answer or "",
            rating=feedback.rating,
            expected_answer=feedback.expected_answer,
        )
    return list(latest.values())
