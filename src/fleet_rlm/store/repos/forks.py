"""Forks: a new session holding copies of another session's first turns (the runs stay the origin's).

Turns are copied (small: a message and an answer each) so everything that reads a session's turns (history,
paging, the CLI) sees the fork's own history; each copy keeps the origin's `run_id`, so the trace of an
inherited turn is the origin's run, read, not duplicated.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import ChatSession, Run, RunEvent, Turn
from fleet_rlm.store.repos.events import NewEvent, append_events
from fleet_rlm.store.types import utcnow

MAX_FORKS_LISTED = 200


async def create_fork(
    session: AsyncSession, *, origin: ChatSession, after_turn: int, title: str, turns: list[Turn]
) -> ChatSession:
    """The fork session with copies of `turns` (the origin's first `after_turn`), indexes and times kept."""
    fork = ChatSession(
        user_id=origin.user_id,
        workspace_id=origin.workspace_id,
        title=title,
        settings=dict(origin.settings or {}),
        forked_from_id=origin.id,
        forked_after_turn=after_turn,
    )
    session.add(fork)
    await session.flush()
    for turn in turns:
        session.add(
            Turn(
                session_id=fork.id,
                index=turn.index,
                user_message=turn.user_message,
                answer=turn.answer,
                run_id=turn.run_id,
                created_at=turn.created_at,
                updated_at=turn.updated_at,
            )
        )
    await session.flush()
    return fork


async def list_forks(session: AsyncSession, *, user_id: str, session_id: str) -> list[ChatSession]:
    """The user's sessions forked from `session_id`, oldest first."""
    result = await session.execute(
        select(ChatSession)
        .where(col(ChatSession.forked_from_id) == session_id, col(ChatSession.user_id) == user_id)
        .order_by(col(ChatSession.created_at), col(ChatSession.id))
        .limit(MAX_FORKS_LISTED)
    )
    return list(result.scalars())


async def last_event_payload(session: AsyncSession, *, run_id: str, type: str) -> dict[str, Any] | None:
    """Payload of the run's latest event of kind `type` (e.g. the `summary` a turn wrote), or None."""
    result = await session.execute(
        select(RunEvent)
        .where(col(RunEvent.run_id) == run_id, col(RunEvent.type) == type)
        .order_by(col(RunEvent.seq).desc())
        .limit(1)
    )
    row = result.scalar_one_or_none()
    return dict(row.payload or {}) if row is not None else None


async def add_record_run(
    session: AsyncSession, *, run_id: str, user_id: str, session_id: str, execution_mode: str, event: NewEvent
) -> Run:
    """A run that executes nothing: already succeeded, holding one event (a fork's `session_forked`)."""
    now = utcnow()
    run = Run(
        id=run_id,
        user_id=user_id,
        session_id=session_id,
        execution_mode=execution_mode,
        status="succeeded",
        outcome="complete",
        started_at=now,
        finished_at=now,
    )
    session.add(run)
    await session.flush()
    await append_events(session, run_id=run.id, events=[event])
    return run
