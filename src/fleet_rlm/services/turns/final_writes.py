"""A finishing run's own rows, as data: its final status, the turn's answer, the session's summary and the
context sources the turn added to its session.

They are written in the event writer's transaction with the run's terminal event (nothing of a turn's end is
delivered before it is committed). Under load many runs finish in one transaction; as data, the writer stores
all of theirs together, a few statements in all instead of three per run (each statement waits for the GIL
behind the turns, so a finishing transaction's length was its statement count).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.store.repos import runs as runs_repo
from fleet_rlm.store.repos import session_sources as session_sources_repo
from fleet_rlm.store.repos import sessions as sessions_repo
from fleet_rlm.store.repos import turns as turns_repo
from fleet_rlm.store.repos.runs import FinalStatus


@dataclass(frozen=True)
class FinalWrites:
    session_id: str
    status: FinalStatus
    turn_id: str | None = None
    answer: str | None = None
    summary: str | None = None
    """The session's new summary (None leaves it); the session moves to the top of the list either way."""
    sources: tuple[dict[str, Any], ...] = ()
    """The context sources the turn added to its session (`held_sources.added_rows`)."""


async def store_final_writes(session: AsyncSession, finals: Sequence[tuple[FinalWrites, int]]) -> None:
    """(writes, the terminal event's seq) of every run finishing in this transaction; the seq becomes the run's
    `last_seq`. Raises as `set_run_status` does when a run cannot move (the writer then retries run by run)."""
    await turns_repo.set_answers(session, [(f.turn_id, f.answer) for f, _ in finals if f.turn_id and f.answer])
    await runs_repo.set_final_statuses(session, [(f.status, last_seq) for f, last_seq in finals])
    await sessions_repo.touch_sessions(session, [(f.session_id, f.summary) for f, _ in finals])
    await session_sources_repo.add_sources(session, [row for f, _ in finals for row in f.sources])
