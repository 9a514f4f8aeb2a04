"""The append-only event log of a run.

`seq` is assigned by bumping `runs.last_seq` with `UPDATE ... RETURNING` in the caller's transaction: the
row lock (Postgres) or the single writer lock (SQLite, waited for via busy_timeout) serializes appenders of
one run until commit, so seqs are dense and monotonic; UNIQUE(run_id, seq) guards against any other writer.
Keep the transaction short: it holds that lock until it commits. A running run's recorder is the one writer of
its events, so it numbers them itself and stores them with `insert_numbered` (no reserve, no read back) and
moves `last_seq` with `runs.record_progress` (or, when it finishes, `runs.set_run_status`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import insert, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.errors import NotFoundError
from fleet_rlm.store.models import Run, RunEvent, Turn
from fleet_rlm.store.types import utcnow

MAX_LIST = 1000


@dataclass(frozen=True)
class NewEvent:
    """An event to append (the store assigns `seq`)."""

    type: str
    payload: dict[str, Any] = field(default_factory=dict)
    ts: datetime | None = None
    depth: int = 0
    actor: str | None = None
    parent_id: str | None = None


@dataclass(frozen=True)
class NumberedEvent:
    """An event whose seq its run's only writer already assigned (dense, from the run's `last_seq` + 1)."""

    run_id: str
    seq: int
    event: NewEvent


async def insert_numbered(session: AsyncSession, events: Sequence[NumberedEvent]) -> None:
    """Store events of any number of runs in one INSERT (the caller moves each run's `last_seq`)."""
    if not events:
        return
    now = utcnow()
    rows = [
        {
            "run_id": item.run_id,
            "seq": item.seq,
            "type": item.event.type,
            "ts": item.event.ts or now,
            "depth": item.event.depth,
            "actor": item.event.actor,
            "parent_id": item.event.parent_id,
            "payload": item.event.payload,
        }
        for item in events
    ]
    await session.execute(_INSERT, rows)  # Core executemany: no ORM unit of work, no read back


_INSERT = insert(RunEvent.__table__)  # type: ignore[attr-defined]


async def _reserve(session: AsyncSession, run_id: str, count: int) -> int:
    """Advance the run's counter by `count`; returns the last reserved seq."""
    result = await session.execute(
        update(Run)
        .where(col(Run.id) == run_id)
        .values(last_seq=col(Run.last_seq) + count)
        .returning(col(Run.last_seq))
        .execution_options(synchronize_session=False)
    )
    last = result.scalar_one_or_none()
    if last is None:
        raise NotFoundError("run", run_id)
    return int(last)


async def append_events(session: AsyncSession, *, run_id: str, events: Sequence[NewEvent]) -> list[RunEvent]:
    """Append several events with consecutive seqs in one round of locking."""
    if not events:
        return []
    last = await _reserve(session, run_id, len(events))
    first = last - len(events) + 1
    rows = [
        RunEvent(
            run_id=run_id,
            seq=first + i,
            type=ev.type,
            ts=ev.ts or utcnow(),
            depth=ev.depth,
            actor=ev.actor,
            parent_id=ev.parent_id,
            payload=ev.payload,
        )
        for i, ev in enumerate(events)
    ]
    session.add_all(rows)
    await session.flush()
    return rows


async def append_event(
    session: AsyncSession,
    *,
    run_id: str,
    type: str,
    payload: dict[str, Any] | None = None,
    ts: datetime | None = None,
    depth: int = 0,
    actor: str | None = None,
    parent_id: str | None = None,
) -> RunEvent:
    """Append one event; returns it with its `seq` (1 for the first event of a run)."""
    event = NewEvent(type=type, payload=payload or {}, ts=ts, depth=depth, actor=actor, parent_id=parent_id)
    (row,) = await append_events(session, run_id=run_id, events=[event])
    return row


async def list_events(session: AsyncSession, *, run_id: str, after_seq: int = 0, limit: int = 500) -> list[RunEvent]:
    """Events with seq > `after_seq` in order (resume a stream from the last seq a client saw)."""
    limit = max(1, min(limit, MAX_LIST))
    result = await session.execute(
        select(RunEvent)
        .where(col(RunEvent.run_id) == run_id, col(RunEvent.seq) > after_seq)
        .order_by(col(RunEvent.seq))
        .limit(limit)
    )
    return list(result.scalars())


async def list_session_events(
    session: AsyncSession, *, session_id: str, type: str, limit: int = MAX_LIST
) -> list[tuple[int, RunEvent]]:
    """(turn index, event) for one event type across the runs of a session's turns, oldest turn first.

    A fork's copied turns point at its origin's runs, so their events are included, as the fork's history is.
    """
    result = await session.execute(
        select(col(Turn.index), RunEvent)
        .join(RunEvent, col(RunEvent.run_id) == col(Turn.run_id))
        .where(col(Turn.session_id) == session_id, col(RunEvent.type) == type)
        .order_by(col(Turn.index), col(RunEvent.seq))
        .limit(max(1, min(limit, MAX_LIST)))
    )
    return [(int(index), event) for index, event in result.tuples()]
