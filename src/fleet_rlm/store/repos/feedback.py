"""Trace feedback: a user's thumbs up/down on a run, optionally with the answer they expected (GEPA input)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import RATINGS, TraceFeedback


async def add_feedback(
    session: AsyncSession,
    *,
    run_id: str,
    user_id: str,
    rating: str,
    comment: str | None = None,
    expected_answer: str | None = None,
) -> TraceFeedback:
    """Record feedback (several per run are kept: the latest is the user's current opinion)."""
    if rating not in RATINGS:
        raise ValueError(f"unknown rating {rating!r}; expected one of {', '.join(RATINGS)}")
    row = TraceFeedback(run_id=run_id, user_id=user_id, rating=rating, comment=comment, expected_answer=expected_answer)
    session.add(row)
    await session.flush()
    return row


async def list_feedback(session: AsyncSession, *, run_id: str, user_id: str) -> list[TraceFeedback]:
    """Oldest first."""
    result = await session.execute(
        select(TraceFeedback)
        .where(col(TraceFeedback.run_id) == run_id, col(TraceFeedback.user_id) == user_id)
        .order_by(col(TraceFeedback.created_at), col(TraceFeedback.id))
    )
    return list(result.scalars())
