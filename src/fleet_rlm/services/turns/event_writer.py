"""One writer per server for every running run's events: concurrent runs share transactions, delivery never waits.

Recorders number and deliver their events themselves (services/turns/recorder.py) and leave what must be stored
here; one task writes everything waiting — every run's events in one INSERT, their `last_seq`s, usage, LM
recordings and artifacts, and a finishing run's final status and answer with its terminal event — in one
transaction, then tells the bus those events are saved (`LocalBus.saved`: the unsaved tail shrinks, other
replicas are notified) and only then delivers terminal events, so a client never sees a turn end before its
answer is committed. Nothing waits on a running run's events (they were delivered already), so they are written
`PERSIST_AFTER_S` after they arrive (later under load), or at once when someone waits (a run finishing,
`flush`): a short turn is one transaction at its end instead of one per step, and while a transaction is in
flight the next one fills, so under load each commit carries many runs (group commit). Parts someone waits on
(a finishing run, a flush) always go in the next transaction; the others join one only once the oldest of them
is due, and at most `BACKGROUND_PARTS` of them (the oldest), so a finishing run never waits behind a
transaction made long by runs still going (under load those were 40 runs and 250 ms). A transaction that fails
is retried run by run, so one run's bad row never costs another run its events; a run whose own write fails is
reported once and keeps running, as before. Every write of a running run is fenced by its claim (`RunPart.fence`:
owner and claim epoch, checked under the rows' locks in the same transaction): a writer whose run was interrupted
or taken over meanwhile (a worker paused past the stale limit) has its part refused, so nothing lands after the
run's terminal event and no seq gap opens.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.runtime.lm_exchange import RecordedItem
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.services.recordings import store_items
from fleet_rlm.services.turns.final_writes import FinalWrites, store_final_writes
from fleet_rlm.store import Database
from fleet_rlm.store.errors import StoreError
from fleet_rlm.store.repos.artifacts import create_artifact
from fleet_rlm.store.repos.events import NumberedEvent, insert_numbered
from fleet_rlm.store.repos.runs import Fence, fenced_out, record_progress

log = logging.getLogger(__name__)

PERSIST_AFTER_S = 0.1  # how long a delivered event waits for its transaction when nobody waits on it
BACKGROUND_PARTS = 8  # parts nobody waits on, per transaction (the rest go in the next ones)


@dataclass
class RunPart:
    """What one run has waiting for the next transaction."""

    run_id: str
    session_id: str
    fence: Fence | None = None  # (owner, claim epoch): the part is written only while the run's claim is this
    events: list[NumberedEvent] = field(default_factory=list)
    recorded: list[RecordedItem] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)  # create_artifact keywords
    usage: dict[str, Any] | None = None
    # the run's own final writes, same transaction (with every other finishing run's); its last_seq becomes the
    # terminal event's seq
    finish: FinalWrites | None = None
    after_commit: Callable[[], None] | None = None  # e.g. deliver the terminal event
    waiters: list[asyncio.Future[None]] = field(default_factory=list)
    since: float = field(default_factory=time.monotonic)  # when its first item arrived

    @property
    def waited_on(self) -> bool:
        return self.finish is not None or bool(self.waiters)


class EventWriter:
    def __init__(self, database: Database, bus: LocalBus, *, persist_after_s: float = PERSIST_AFTER_S) -> None:
        self.database = database
        self.bus = bus
        self.persist_after_s = persist_after_s
        self._pending: dict[str, RunPart] = {}
        self._inflight: dict[str, RunPart] = {}
        self._failed: dict[str, BaseException] = {}
        self._wake = asyncio.Event()
        self._urgent = asyncio.Event()  # someone waits on a pending part: write now
        self._task: asyncio.Task[None] | None = None

    def part(self, run_id: str, session_id: str, fence: Fence | None = None) -> RunPart:
        """The run's part of the next transaction (add to it, then `wake`)."""
        part = self._pending.get(run_id)
        if part is None:
            part = self._pending[run_id] = RunPart(run_id, session_id, fence)
        return part

    def wake(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="event-writer")
        self._wake.set()

    async def flush(self, run_id: str) -> BaseException | None:
        """Wait until everything handed over for `run_id` is written; returns the run's write failure, if any."""
        pending = self._pending.get(run_id)
        part = pending or self._inflight.get(run_id)
        if part is not None:
            waiter = asyncio.get_running_loop().create_future()
            part.waiters.append(waiter)
            self.wake()
            if pending is not None:
                self._urgent.set()
            await waiter
        return self._failed.pop(run_id, None)

    async def stop(self) -> None:
        """Write what is still pending (a run that is still going keeps its events), then stop."""
        for run_id in list(self._pending):
            await self.flush(run_id)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            background_due = await self._due()
            self._wake.clear()
            self._urgent.clear()
            self._inflight = self._take(background_due)
            if self._pending:  # left for later: come back for it
                self._wake.set()
            if not self._inflight:
                continue
            parts = list(self._inflight.values())
            try:
                await self._write(parts)
            finally:
                self._inflight = {}
                for part in parts:
                    for waiter in part.waiters:
                        if not waiter.done():
                            waiter.set_result(None)

    def _take(self, background_due: bool) -> dict[str, RunPart]:
        """The next transaction's parts: every waited-on part and, when the others are due, up to
        BACKGROUND_PARTS of those, oldest first; the rest stay pending."""
        taken = {run_id: part for run_id, part in self._pending.items() if part.waited_on}
        if background_due:
            background = sorted((p for p in self._pending.values() if not p.waited_on), key=lambda p: p.since)
            taken.update((part.run_id, part) for part in background[:BACKGROUND_PARTS])
        for run_id in taken:
            del self._pending[run_id]
        return taken

    async def _due(self) -> bool:
        """Return when pending parts should be written: at once when one is waited on (under load the next
        transaction fills while one is in flight), else when the oldest has waited `persist_after_s`; says whether
        the parts nobody waits on are due. A timer that ends the wait counts as due even if it fired a little
        early (uvloop's timers have millisecond steps on a cached clock): re-checking the clock instead found
        nothing due and spun, or waited for the next wake."""
        background = [part.since for part in self._pending.values() if not part.waited_on]
        if not background:
            await asyncio.sleep(0)
            return False
        delay = min(background) + self.persist_after_s - time.monotonic()
        due = delay <= 0
        if not due and not self._urgent.is_set() and len(background) == len(self._pending):
            try:
                await asyncio.wait_for(self._urgent.wait(), delay)
            except TimeoutError:
                due = True
        await asyncio.sleep(0)  # what this loop turn still emits joins the transaction
        return due

    async def _write(self, parts: list[RunPart]) -> None:
        try:
            async with self.database.transaction(inline=True) as session:
                refused = await _store(session, parts)
            saved = self._refuse(parts, refused)
        except Exception as batch_error:  # retry run by run: one run's failure must not cost the others their events
            if len(parts) > 1:  # a bad row, or a statement that cannot take several runs: say so, it costs a lot
                reason = str(batch_error).partition("\n")[0] or type(batch_error).__name__
                log.warning("a transaction of %d runs failed (%s); writing them run by run", len(parts), reason)
            saved = []
            for part in parts:
                try:
                    async with self.database.transaction(inline=True) as session:
                        refused = await _store(session, [part])
                    saved.extend(self._refuse([part], refused))
                except Exception as exc:  # the database is down (or this run's rows are refused): report once
                    if part.run_id not in self._failed:
                        log.error("cannot persist events of run %s: %s", part.run_id, exc)
                    self._failed[part.run_id] = exc
        for part in saved:
            if part.after_commit is not None:
                part.after_commit()
        done = [(p.run_id, p.session_id, p.events[-1].seq) for p in saved if p.events]
        try:
            await self.bus.saved(done)
        except Exception as exc:  # other replicas fall back to their periodic re-read
            log.warning("saved events not announced: %s", exc)

    def _refuse(self, parts: list[RunPart], refused: set[str]) -> list[RunPart]:
        """The parts written; a refused one (its claim moved) is reported as the run's write failure."""
        for part in parts:
            if part.run_id in refused:
                if part.run_id not in self._failed:
                    log.warning("writes of run %s refused: its claim moved (interrupted or taken over)", part.run_id)
                self._failed[part.run_id] = ClaimLost(part.run_id)
        return [part for part in parts if part.run_id not in refused]


class ClaimLost(StoreError):
    """A running run's writes were refused: it was interrupted or claimed by another worker meanwhile."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id} moved: its writes are refused")
        self.run_id = run_id


async def _store(session: AsyncSession, parts: list[RunPart]) -> set[str]:
    """Write the parts whose fence holds (checked first, under the runs' row locks); returns the refused ids."""
    refused = await fenced_out(session, {part.run_id: part.fence for part in parts if part.fence is not None})
    if refused:
        parts = [part for part in parts if part.run_id not in refused]
    await store_items(session, [(part.run_id, part.recorded) for part in parts if part.recorded])
    for part in parts:
        for artifact in part.artifacts:
            await create_artifact(session, run_id=part.run_id, session_id=part.session_id, **artifact)
    await insert_numbered(session, [event for part in parts for event in part.events])
    progress = [
        (part.run_id, part.events[-1].seq, part.usage)
        for part in parts
        if part.finish is None and part.events  # a finishing run's final writes set its last_seq and usage
    ]
    await record_progress(session, progress)
    await store_final_writes(session, [(part.finish, part.events[-1].seq) for part in parts if part.finish])
    return refused
