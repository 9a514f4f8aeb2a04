"""Follow a run: replay committed events after a seq, then continue live — no gap, no duplicate.

Subscribing happens before the first database read, so nothing committed in between is missed (a run this
process records is read from the bus's unsaved tail instead, when that holds everything after `after`); live batches
that skip a seq (or a poke from another replica, or a quiet interval) make the follower re-read the database,
followed by this process's events that were delivered live but are not committed yet (`bus.unsaved`). The
quiet re-read is only a safety net (a lost cross-replica notice, a run recovered elsewhere), so its interval
doubles while a run stays quiet, up to `QUIET_MAX_S`: under load, when every run is slow, a re-read per
follower per second was a sixth of the API process's CPU (docs/performance.md). A quiet run this process records
costs no read at all: its tail is known, and its end comes through the bus.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from fleet_rlm.events import TERMINAL_TYPES
from fleet_rlm.events.status import FINAL
from fleet_rlm.services.live.bus import LocalBus, Subscription
from fleet_rlm.services.live.codec import row_to_json
from fleet_rlm.store import Database
from fleet_rlm.store.repos import runs as runs_repo
from fleet_rlm.store.repos.events import list_events

PAGE = 500
QUIET_MAX_S = 4.0


async def _read_after(
    database: Database, bus: LocalBus, run_id: str, after: int, session_id: str, *, final: bool = False
) -> tuple[list[dict[str, Any]], bool]:
    """Committed events after `after`, then the unsaved tail beyond them; True when the database page was full.

    The tail is copied before the read: an event committed meanwhile is in the read, any other still in the copy.
    A run this process is recording, followed from past its committed events, needs no read at all — unless it
    is `final` in the database: its terminal event may be committed but not yet handed to the bus.
    """
    known = None if final else bus.unsaved.known_after(run_id, after)
    if known is not None:
        return known, False
    unsaved = bus.unsaved.after(run_id, after)
    async with database.session() as session:
        rows = await list_events(session, run_id=run_id, after_seq=after, limit=PAGE)
    events = [row_to_json(row, session_id=session_id) for row in rows]
    if len(rows) == PAGE:
        return events, True
    last = rows[-1].seq if rows else after
    for event in unsaved:
        if event["seq"] == last + 1:
            events.append(event)
            last += 1
    return events, False


async def _run_is_final(database: Database, run_id: str) -> bool:
    async with database.session() as session:
        run = await runs_repo.get_run(session, run_id=run_id)
    return run is None or run.status in FINAL


def _drain(subscription: Subscription) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    while not subscription.queue.empty():
        events.extend(subscription.queue.get_nowait())
    return events


async def follow_run(
    database: Database,
    bus: LocalBus,
    *,
    run_id: str,
    session_id: str,
    after: int = 0,
    poll_s: float = 1.0,
) -> AsyncIterator[dict[str, Any]]:
    """Yield the run's events with seq > `after` in order, ending after its terminal event."""
    subscription = bus.subscribe(run_id=run_id)
    last = after
    wait_s = poll_s
    try:
        read_db = True
        # check for a finished run before the first wait; one this process records is not (its terminal event
        # comes through the bus)
        quiet = not bus.unsaved.is_recording(run_id)
        while True:
            subscription.wakeup.clear()
            live = _drain(subscription)
            if subscription.overflowed:
                subscription.overflowed = False
                read_db = True
            yielded = False
            for event in live:
                seq = int(event["seq"])
                if seq <= last:
                    continue
                if seq != last + 1:
                    read_db = True
                    break
                last = seq
                yielded = True
                yield event
                if event["type"] in TERMINAL_TYPES:
                    return
            while read_db:
                page, read_db = await _read_after(database, bus, run_id, last, session_id)
                for event in page:
                    last = int(event["seq"])
                    yielded = True
                    yield event
                    if event["type"] in TERMINAL_TYPES:
                        return
            if yielded:
                continue
            # a run this process records needs no check: its end comes through the bus (services/live/unsaved.py)
            if quiet and not bus.unsaved.is_recording(run_id) and await _run_is_final(database, run_id):
                # A final run without a terminal event (e.g. recovered from a crash): nothing more will come.
                full = True
                while full:
                    page, full = await _read_after(database, bus, run_id, last, session_id, final=True)
                    for event in page:
                        last = int(event["seq"])
                        yield event
                return
            try:
                await asyncio.wait_for(subscription.wakeup.wait(), wait_s)
                quiet, wait_s = False, poll_s
            except TimeoutError:
                quiet, wait_s = True, min(wait_s * 2, max(poll_s, QUIET_MAX_S))
            # Woken without a batch means another replica committed events; a quiet interval re-checks too.
            read_db = quiet or subscription.queue.empty()
    finally:
        bus.unsubscribe(subscription)


async def follow_session(
    database: Database, bus: LocalBus, *, session_id: str, after: int = 0, poll_s: float = 5.0
) -> AsyncIterator[dict[str, Any]]:
    """The session's latest run from `after`, then every later run from its start; runs until cancelled."""
    subscription = bus.subscribe(session_id=session_id)
    try:
        async with database.session() as session:
            latest = await runs_repo.list_runs(session, session_id=session_id, limit=1)
        seen: set[str] = set()
        if latest:
            seen.add(latest[0].id)
            async for event in follow_run(database, bus, run_id=latest[0].id, session_id=session_id, after=after):
                yield event
        while True:
            try:
                await asyncio.wait_for(subscription.wakeup.wait(), poll_s)
            except TimeoutError:
                pass
            subscription.wakeup.clear()
            _drain(subscription)
            async with database.session() as session:
                runs = await runs_repo.list_runs(session, session_id=session_id, limit=5)
            for run in reversed(runs):
                if run.id in seen:
                    continue
                seen.add(run.id)
                async for event in follow_run(database, bus, run_id=run.id, session_id=session_id):
                    yield event
    finally:
        bus.unsubscribe(subscription)
