"""A session's context sources (`SessionSource`): added by its turns, listed for every later turn, removed by
the user, copied into a fork for the turns it keeps. Ownership of the session is checked by the caller."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import SessionSource
from fleet_rlm.store.repos._sql import insert_values_ignoring_conflict
from fleet_rlm.store.types import new_id, utcnow

MAX_SOURCES = 1000


async def list_sources(session: AsyncSession, *, session_id: str) -> list[SessionSource]:
    """The session's sources in the order they were added (turn, then load order)."""
    result = await session.execute(
        select(SessionSource)
        .where(col(SessionSource.session_id) == session_id)
        .order_by(col(SessionSource.turn_index), col(SessionSource.created_at), col(SessionSource.id))
        .limit(MAX_SOURCES)
    )
    return list(result.scalars())


async def add_sources(session: AsyncSession, rows: Sequence[dict[str, Any]]) -> None:
    """Insert sources given as column dicts (no `id`/`created_at` needed); a document the session already holds
    (same `key`) is left as it is: the turn that added it first keeps it."""
    if not rows:
        return
    now = utcnow()
    values = [{"id": new_id(), "created_at": now, **row} for row in rows]
    table: Any = SessionSource.__table__  # type: ignore[attr-defined]
    await insert_values_ignoring_conflict(session, table, values, conflict_columns=["session_id", "key"])


async def remove_source(session: AsyncSession, *, session_id: str, source_id: str) -> SessionSource | None:
    """Delete one source of the session; returns the removed row (None when the session has no such source)."""
    row = await session.get(SessionSource, source_id)
    if row is None or row.session_id != session_id:
        return None
    await session.execute(delete(SessionSource).where(col(SessionSource.id) == source_id))
    return row


async def copy_sources(session: AsyncSession, *, origin_id: str, fork_id: str, before_turn: int) -> list[SessionSource]:
    """Copy the origin's sources added by its first `before_turn` turns into the fork; returns the copies."""
    kept = [row for row in await list_sources(session, session_id=origin_id) if row.turn_index < before_turn]
    copies = [SessionSource(**{**row.model_dump(), "id": new_id(), "session_id": fork_id}) for row in kept]
    session.add_all(copies)
    await session.flush()
    return copies
