"""Crash recovery: runs whose server died become `interrupted`, with a terminal event, so nothing waits forever.

A run is orphaned when its owner process on this host is gone (checked at startup and on every sweep), or when
its heartbeat is older than `run_stale_after_s` (an owner on another host that stopped beating). Committed turns
are never touched; the session stays usable.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Container
from datetime import timedelta

from fleet_rlm.config import Settings
from fleet_rlm.events import TurnInterrupted, event_to_json, with_seq
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.services.live.codec import to_new_event
from fleet_rlm.store import Database, InvalidTransitionError, utcnow
from fleet_rlm.store.models import Run
from fleet_rlm.store.repos import runs as runs_repo
from fleet_rlm.store.repos.events import append_events

log = logging.getLogger(__name__)


def owner_is_dead(owner: str | None, *, current_owner: str) -> bool:
    """True when `owner` names a process on this host that no longer exists (never for this process)."""
    if not owner or owner == current_owner:
        return False
    host, _, pid_text = owner.rpartition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _orphaned(run: Run, *, current_owner: str, stale_before: object, active: Container[str]) -> str | None:
    if run.id in active:
        return None
    if owner_is_dead(run.owner, current_owner=current_owner):
        return "the server running this turn stopped"
    beat = run.heartbeat_at or run.created_at
    if beat < stale_before:  # type: ignore[operator]
        return "the turn's heartbeat was lost"
    return None


async def recover_orphaned_runs(
    database: Database, bus: LocalBus, settings: Settings, *, current_owner: str, active: Container[str]
) -> int:
    """Mark orphaned runs interrupted (each with a turn_interrupted event); returns how many."""
    stale_before = utcnow() - timedelta(seconds=settings.run_stale_after_s)
    async with database.session() as session:
        candidates = await runs_repo.list_unfinished_runs(session)
    count = 0
    for run in candidates:
        reason = _orphaned(run, current_owner=current_owner, stale_before=stale_before, active=active)
        if reason is None:
            continue
        if await interrupt_run(database, bus, run_id=run.id, session_id=run.session_id, reason=reason):
            count += 1
    return count


async def interrupt_run(database: Database, bus: LocalBus, *, run_id: str, session_id: str, reason: str) -> bool:
    """Mark one unfinished run interrupted with its turn_interrupted event; False if it finished meanwhile."""
    event = TurnInterrupted(run_id=run_id, session_id=session_id, actor="runner", reason=reason)
    try:
        async with database.transaction() as session:
            await runs_repo.set_run_status(
                session, run_id=run_id, status="interrupted", error={"code": "interrupted", "message": reason}
            )
            (row,) = await append_events(session, run_id=run_id, events=[to_new_event(event)])
    except InvalidTransitionError:
        return False
    await bus.publish(run_id, session_id, [event_to_json(with_seq(event, row.seq))])
    log.warning("run %s interrupted: %s", run_id, reason)
    return True


async def sweep_forever(
    database: Database, bus: LocalBus, settings: Settings, *, current_owner: str, active: Container[str]
) -> None:
    """Periodic recovery for replicas that die while others keep serving."""
    interval = max(1.0, settings.run_stale_after_s / 3)
    while True:
        await asyncio.sleep(interval)
        try:
            await recover_orphaned_runs(database, bus, settings, current_owner=current_owner, active=active)
        except Exception as exc:  # keep sweeping; the database may come back
            log.warning("run recovery sweep failed: %s", exc)
