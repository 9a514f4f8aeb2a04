"""Trace feedback: a user's thumbs up/down on a run, with an optional comment and the answer they expected.

One row per (run, user): rating again replaces it (`put_feedback` is an upsert that is safe under concurrent
writes). Listings join the run and its turn, so a rating comes with the task and answer it judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, func, select

from fleet_rlm.store.models import RATINGS, Run, TraceFeedback, Turn
from fleet_rlm.store.repos._sql import UNSET, Page, insert_ignoring_conflict
from fleet_rlm.store.types import utcnow

MAX_PAGE = 200


def _check(rating: str) -> None:
    if rating not in RATINGS:
        raise ValueError(f"unknown rating {rating!r}; expected one of {', '.join(RATINGS)}")


async def get_feedback(session: AsyncSession, *, run_id: str, user_id: str) -> TraceFeedback | None:
    result = await session.execute(
        select(TraceFeedback).where(col(TraceFeedback.run_id) == run_id, col(TraceFeedback.user_id) == user_id)
    )
    return result.scalars().first()


async def put_feedback(
    session: AsyncSession,
    *,
    run_id: str,
    user_id: str,
    rating: str,
    comment: str | None = None,
    expected_answer: str | None = None,
) -> TraceFeedback:
    """Create or replace the user's feedback on the run (all three fields are replaced)."""
    _check(rating)
    row = TraceFeedback(run_id=run_id, user_id=user_id, rating=rating, comment=comment, expected_answer=expected_answer)
    if await insert_ignoring_conflict(session, row, conflict_columns=["run_id", "user_id"]):
        found = await get_feedback(session, run_id=run_id, user_id=user_id)
        assert found is not None
        return found
    updated = await update_feedback(
        session, run_id=run_id, user_id=user_id, rating=rating, comment=comment, expected_answer=expected_answer
    )
    assert updated is not None  # the conflicting row exists
    return updated


async def update_feedback(
    session: AsyncSession,
    *,
    run_id: str,
    user_id: str,
    rating: str = UNSET,
    comment: str | None = UNSET,
    expected_answer: str | None = UNSET,
) -> TraceFeedback | None:
    """Change the given fields of the user's feedback on the run; None when there is none."""
    row = await get_feedback(session, run_id=run_id, user_id=user_id)
    if row is None:
        return None
    if rating is not UNSET:
        _check(rating)
        row.rating = rating
    if comment is not UNSET:
        row.comment = comment
    if expected_answer is not UNSET:
        row.expected_answer = expected_answer
    row.updated_at = utcnow()
    session.add(row)
    await session.flush()
    return row


async def delete_feedback(session: AsyncSession, *, run_id: str, user_id: str) -> bool:
    row = await get_feedback(session, run_id=run_id, user_id=user_id)
    if row is None:
        return False
    await session.delete(row)
    await session.flush()
    return True


@dataclass(frozen=True)
class RatedRun:
    """A user's feedback on one of their runs, with the run's session, turn, mode and the task and answer."""

    feedback: TraceFeedback
    run: Run
    turn: Turn | None

    @property
    def task(self) -> str:
        return self.turn.user_message if self.turn is not None else ""

    @property
    def answer(self) -> str:
        return (self.turn.answer or "") if self.turn is not None else ""


async def list_rated(
    session: AsyncSession,
    *,
    user_id: str,
    run_ids: list[str] | None = None,
    session_ids: list[str] | None = None,
    turn_id: str | None = None,
    rating: str | None = None,
    mode: str | None = None,
    limit: int = 50,
    offset: int = 0,
    newest_first: bool = True,
) -> Page[RatedRun]:
    """The user's feedback on their own runs, filtered; `limit` is capped at MAX_PAGE unless it is larger on
    purpose (dataset building passes its own cap)."""
    where: list[Any] = [col(TraceFeedback.user_id) == user_id, col(Run.user_id) == user_id]
    if run_ids is not None:
        where.append(col(TraceFeedback.run_id).in_(run_ids))
    if session_ids:
        where.append(col(Run.session_id).in_(session_ids))
    if turn_id is not None:
        where.append(col(Run.turn_id) == turn_id)
    if rating is not None:
        where.append(col(TraceFeedback.rating) == rating)
    if mode is not None:
        where.append(col(Run.execution_mode) == mode)
    joined = select(TraceFeedback, Run, Turn).join(Run, col(Run.id) == col(TraceFeedback.run_id))
    joined = joined.outerjoin(Turn, col(Turn.id) == col(Run.turn_id)).where(*where)
    count = select(func.count()).select_from(TraceFeedback).join(Run, col(Run.id) == col(TraceFeedback.run_id))
    total = (await session.execute(count.where(*where))).scalar_one()
    order = (col(TraceFeedback.updated_at), col(TraceFeedback.id))
    ordered = joined.order_by(*(c.desc() for c in order)) if newest_first else joined.order_by(*order)
    rows = (await session.execute(ordered.limit(max(1, limit)).offset(max(0, offset)))).all()
    items = [RatedRun(feedback=f, run=r, turn=t) for f, r, t in rows]
    return Page(items=items, total=total, limit=limit, offset=offset)
