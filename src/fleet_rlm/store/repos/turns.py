"""Turns of a session: numbered 0, 1, 2... in the order they were added."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import bindparam, func, insert, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import Run, Turn
from fleet_rlm.store.repos._sql import UNSET, Page

MAX_PAGE = 200


async def add_turn(session: AsyncSession, *, session_id: str, user_message: str, run_id: str | None = None) -> Turn:
    """Append a turn with the next index, computed inside its INSERT (one statement); a concurrent append for
    the same session fails on the unique (session_id, index) constraint rather than silently reordering turns."""
    after = select(func.coalesce(func.max(Turn.index), -1) + 1).where(col(Turn.session_id) == session_id)
    values = Turn(session_id=session_id, user_message=user_message, run_id=run_id).model_dump(exclude={"index"})
    stmt = insert(Turn).values(**values, index=after.scalar_subquery()).returning(Turn)
    return (await session.scalars(stmt)).one()


async def get_turn(session: AsyncSession, *, turn_id: str) -> Turn | None:
    return await session.get(Turn, turn_id)


_OF_SESSION = select(Turn).where(col(Turn.session_id) == bindparam("session_id")).order_by(col(Turn.index))


async def list_turns(session: AsyncSession, *, session_id: str) -> list[Turn]:
    result = await session.execute(_OF_SESSION, {"session_id": session_id})
    return list(result.scalars())


async def list_turns_page(session: AsyncSession, *, session_id: str, limit: int = 50, offset: int = 0) -> Page[Turn]:
    """One page of a session's turns in order (the committed history a client scrolls through)."""
    limit = max(1, min(limit, MAX_PAGE))
    offset = max(0, offset)
    where = col(Turn.session_id) == session_id
    total = (await session.execute(select(func.count()).select_from(Turn).where(where))).scalar_one()
    rows = await session.execute(select(Turn).where(where).order_by(col(Turn.index)).limit(limit).offset(offset))
    return Page(items=list(rows.scalars()), total=total, limit=limit, offset=offset)


async def set_answers(session: AsyncSession, answers: list[tuple[str, str]]) -> None:
    """(turn_id, answer) of turns finishing in one transaction: one executemany."""
    if answers:
        await session.execute(_SET_ANSWER, [{"b_turn": turn_id, "b_answer": answer} for turn_id, answer in answers])


_TURNS: Any = Turn.__table__  # type: ignore[attr-defined]
_SET_ANSWER = update(_TURNS).where(_TURNS.c.id == bindparam("b_turn")).values(answer=bindparam("b_answer"))


async def update_turn(
    session: AsyncSession, *, turn_id: str, answer: str | None = UNSET, run_id: str | None = UNSET
) -> bool:
    """Set the given fields in one UPDATE (no read: a turn's answer is written in the writer's shared
    transaction); False if there is no such turn."""
    values = {name: value for name, value in (("answer", answer), ("run_id", run_id)) if value is not UNSET}
    if not values:
        return await session.get(Turn, turn_id) is not None
    result: Any = await session.execute(
        update(Turn).where(col(Turn.id) == turn_id).values(**values).execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)


RunState = tuple[str, dict[str, Any] | None]


async def run_states(session: AsyncSession, *, run_ids: Collection[str]) -> dict[str, RunState]:
    """(status, error) of the runs turns point at, by run id, in one query (a fork's turns point at its origin's)."""
    wanted = sorted(set(run_ids))
    if not wanted:
        return {}
    result = await session.execute(select(col(Run.id), col(Run.status), col(Run.error)).where(col(Run.id).in_(wanted)))
    return {run_id: (status, dict(error) if error else None) for run_id, status, error in result.tuples()}
