"""Turn runs as jobs (`services/jobs`): how a run is claimed, beats, and is interrupted when its server died.

An interrupted run gets a turn_interrupted event, so a follower ends; committed turns are never touched and the
session stays usable. The sweep itself (dead owner on this host, or a heartbeat older than `run_stale_after_s`)
is the shared one in `services/jobs/sweep.py`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.events import EventBase, TurnCancelled, TurnInterrupted, event_to_json, with_seq
from fleet_rlm.services.jobs.sweep import JobRow, Orphaned
from fleet_rlm.services.jobs.table import TableJobs
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.services.live.codec import to_new_event
from fleet_rlm.store import Database, InvalidTransitionError
from fleet_rlm.store.repos import runs as runs_repo
from fleet_rlm.store.repos.events import append_events

log = logging.getLogger(__name__)

REASONS: dict[Orphaned, str] = {
    "owner_stopped": "the server running this turn stopped",
    "heartbeat_lost": "the turn's heartbeat was lost",
}


class TurnJobs(TableJobs):
    """The `runs` table as a JobStore and a JobKind."""

    kind = "turn"
    resume: Callable[[str], Awaitable[bool]] | None = None
    """Continues an orphaned run instead (`TurnService.resume`); the reason it could not is in `why_not`."""
    why_not: dict[str, str] | None = None

    async def claim(self, session: AsyncSession, job_id: str, owner: str) -> None:
        await runs_repo.set_run_status(session, run_id=job_id, status="running", owner=owner)

    async def beat(self, session: AsyncSession, job_ids: Collection[str], owner: str) -> set[str]:
        return await runs_repo.heartbeat(session, run_ids=job_ids, owner=owner)

    async def save_progress(self, session: AsyncSession, job_id: str, progress: dict[str, Any]) -> None:
        return None  # a turn's progress is its event log

    async def unfinished(self, database: Database) -> list[JobRow]:
        async with database.session() as session:
            runs = await runs_repo.list_unfinished_runs(session)
        return [
            JobRow(
                id=r.id,
                owner=r.owner,
                beat_at=r.heartbeat_at or r.created_at,
                session_id=r.session_id,
                queued=r.status == "queued",
            )
            for r in runs
        ]

    async def interrupt(self, row: JobRow, why: Orphaned) -> bool:
        assert row.session_id is not None
        if self.resume is not None:
            try:
                if await self.resume(row.id):
                    return True
            except Exception:  # resuming is a best effort: the run is then interrupted as before
                log.exception("resuming run %s failed", row.id)
        reason = REASONS[why]
        extra = (self.why_not or {}).pop(row.id, None)
        if extra:
            reason = f"{reason}; it could not be resumed: {extra}"
        return await interrupt_run(self.database, self.bus, run_id=row.id, session_id=row.session_id, reason=reason)


async def interrupt_run(database: Database, bus: LocalBus, *, run_id: str, session_id: str, reason: str) -> bool:
    """Mark one unfinished run interrupted with its turn_interrupted event; False if it finished meanwhile."""
    event = TurnInterrupted(run_id=run_id, session_id=session_id, actor="runner", reason=reason)
    ended = await end_run(database, bus, event, status="interrupted", error={"code": "interrupted", "message": reason})
    if ended:
        log.warning("run %s interrupted: %s", run_id, reason)
    return ended


async def cancel_unstarted_run(database: Database, bus: LocalBus, *, run_id: str, session_id: str) -> bool:
    """End a queued run that no worker will start (its job was cancelled before one took it) as cancelled."""
    event = TurnCancelled(run_id=run_id, session_id=session_id, actor="runner", reason="cancelled by request")
    return await end_run(database, bus, event, status="cancelled")


async def end_run(
    database: Database, bus: LocalBus, event: EventBase, *, status: str, error: dict[str, Any] | None = None
) -> bool:
    """Move an unfinished run to a final `status` with its terminal `event`, written by no runner of its own (the
    sweeper, a shutdown, a cancel of a queued run); False if it finished meanwhile."""
    try:
        async with database.transaction() as session:
            await runs_repo.set_run_status(session, run_id=event.run_id, status=status, error=error)
            (row,) = await append_events(session, run_id=event.run_id, events=[to_new_event(event)])
    except InvalidTransitionError:
        return False
    await bus.publish(event.run_id, event.session_id, [event_to_json(with_seq(event, row.seq))])
    return True
