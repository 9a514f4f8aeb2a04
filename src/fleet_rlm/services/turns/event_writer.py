"""One writer per server for every running run's events: concurrent runs share transactions, delivery never waits.

Recorders number and deliver their events themselves (services/turns/recorder.py) and leave what must be stored
here; one task writes everything waiting — every run's events in one INSERT, their `last_seq`s, usage, LM
recordings and artifacts, and a finishing run's final status and answer with its terminal event — in one
transaction, then tells the bus those events are saved (`LocalBus.saved`: the unsaved tail shrinks, other
replicas are notified) and only then delivers terminal events, so a client never sees a turn end before its
answer is committed. While a transaction is in flight the next one fills,
so under load each commit carries many runs (group commit) instead of one transaction per run and batch. A
transaction that fails is retried run by run, so one run's bad row never costs another run its events; a run
whose own write fails is reported once and keeps running, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.runtime.lm_exchange import RecordedItem
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.services.recordings import store_items
from fleet_rlm.store import Database
from fleet_rlm.store.repos.artifacts import create_artifact
from fleet_rlm.store.repos.events import NumberedEvent, insert_numbered
from fleet_rlm.store.repos.runs import record_usage

log = logging.getLogger(__name__)

WINDOW_S = 0.002  # after the first event, let the same burst join the transaction


@dataclass
class RunPart:
    """What one run has waiting for the next transaction."""

    run_id: str
    session_id: str
    events: list[NumberedEvent] = field(default_factory=list)
    recorded: list[RecordedItem] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)  # create_artifact keywords
    usage: dict[str, Any] | None = None
    finish: Callable[[AsyncSession], Awaitable[None]] | None = None  # the run's own final writes, same transaction
    after_commit: Callable[[], None] | None = None  # e.g. deliver the terminal event
    waiters: list[asyncio.Future[None]] = field(default_factory=list)


class EventWriter:
    def __init__(self, database: Database, bus: LocalBus) -> None:
        self.database = database
        self.bus = bus
        self._pending: dict[str, RunPart] = {}
        self._inflight: dict[str, RunPart] = {}
        self._failed: dict[str, BaseException] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def part(self, run_id: str, session_id: str) -> RunPart:
        """The run's part of the next transaction (add to it, then `wake`)."""
        part = self._pending.get(run_id)
        if part is None:
            part = self._pending[run_id] = RunPart(run_id, session_id)
        return part

    def wake(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="event-writer")
        self._wake.set()

    async def flush(self, run_id: str) -> BaseException | None:
        """Wait until everything handed over for `run_id` is written; returns the run's write failure, if any."""
        part = self._pending.get(run_id) or self._inflight.get(run_id)
        if part is not None:
            waiter = asyncio.get_running_loop().create_future()
            part.waiters.append(waiter)
            self.wake()
            await waiter
        return self._failed.pop(run_id, None)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            await asyncio.sleep(WINDOW_S)
            self._wake.clear()
            if not self._pending:
                continue
            self._inflight, self._pending = self._pending, {}
            parts = list(self._inflight.values())
            try:
                await self._write(parts)
            finally:
                self._inflight = {}
                for part in parts:
                    for waiter in part.waiters:
                        if not waiter.done():
                            waiter.set_result(None)

    async def _write(self, parts: list[RunPart]) -> None:
        try:
            async with self.database.transaction() as session:
                await _store(session, parts)
            saved = parts
        except Exception:  # retry run by run: one run's failure must not cost the others their events
            saved = []
            for part in parts:
                try:
                    async with self.database.transaction() as session:
                        await _store(session, [part])
                    saved.append(part)
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


async def _store(session: AsyncSession, parts: list[RunPart]) -> None:
    for part in parts:
        if part.recorded:
            await store_items(session, run_id=part.run_id, items=part.recorded)
        for artifact in part.artifacts:
            await create_artifact(session, run_id=part.run_id, session_id=part.session_id, **artifact)
    await insert_numbered(session, [event for part in parts for event in part.events])
    for part in parts:
        if part.usage is not None:
            await record_usage(session, run_id=part.run_id, usage=part.usage)
        if part.finish is not None:
            await part.finish(session)
