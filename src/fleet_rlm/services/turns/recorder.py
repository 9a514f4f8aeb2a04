"""Persist-then-publish for one run: the runtime's thread-safe sink on one side, the store and bus on the other.

The runtime emits from worker threads; events are queued onto the server's event loop in emission order, written
in batches (one transaction per batch, so the store assigns dense seqs) and only then published. A client can
therefore never see an event the store does not have. The terminal event (turn_finished, ...) is held back:
the executor stores it in the same transaction as the run's final status and the committed answer. Each
`usage` event also updates `runs.usage` in its batch's transaction, so a run killed mid-turn (or failing outside
the runtime) still reports the tokens, LM calls and cost it spent up to its last usage event. The runtime's LM
recordings (`record_lm`) ride the same queue and are stored in the transaction of the batch they arrive with.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from fleet_rlm.events import TERMINAL_TYPES, ArtifactCreated, EventBase, Usage, UsageTotals, event_to_json, with_seq
from fleet_rlm.runtime.lm_exchange import RecordedItem
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.services.live.codec import to_new_event
from fleet_rlm.services.recordings import store_items
from fleet_rlm.store import Database
from fleet_rlm.store.repos.artifacts import create_artifact
from fleet_rlm.store.repos.events import append_events
from fleet_rlm.store.repos.runs import record_usage

log = logging.getLogger(__name__)

MAX_BATCH = 256


class RunRecorder:
    """`emit` is the runtime's EventSink; `run()` is the consumer task; `close()` flushes and stops it."""

    def __init__(
        self,
        database: Database,
        bus: LocalBus,
        *,
        run_id: str,
        session_id: str,
        user_id: str | None = None,
        observer: Callable[[EventBase], None] | None = None,
    ) -> None:
        self.database = database
        self.observer = observer  # sees every recorded event but the terminal one, in order (the run's trace)
        self.user_id = user_id
        self.bus = bus
        self.run_id = run_id
        self.session_id = session_id
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[EventBase | RecordedItem | None] = asyncio.Queue()
        self.recorded: list[RecordedItem] = []  # LM recordings waiting for the next batch's transaction
        self.last_seq = 0
        self.failed: BaseException | None = None
        self.terminal: EventBase | None = None
        self.usage: dict[str, Any] | None = None  # the latest usage event's totals
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = self.loop.create_task(self._consume(), name=f"recorder-{self.run_id}")

    def record_lm(self, item: RecordedItem) -> None:
        """The runtime's RecordingSink: LM recordings travel the event queue and are stored with a batch."""
        self.emit(item)

    def emit(self, event: EventBase | RecordedItem) -> None:
        """Thread-safe; callable from the runtime's worker threads and from the loop itself."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self.queue.put_nowait(event)
        else:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, event)

    async def record(self, event: EventBase) -> None:
        """Emit from async code (the service's own lifecycle events)."""
        self.emit(event)

    async def close(self) -> None:
        """Wait until everything emitted so far is stored and published."""
        self.queue.put_nowait(None)
        if self._task is not None:
            await self._task

    async def _consume(self) -> None:
        done = False
        while not done:
            first = await self.queue.get()
            batch: list[EventBase] = []
            if first is None:
                done = True
            else:
                self._take(first, batch)
            while not done and not self.queue.empty() and len(batch) < MAX_BATCH:
                item = self.queue.get_nowait()
                if item is None:
                    done = True
                else:
                    self._take(item, batch)
            if batch or self.recorded:
                await self._write(batch)

    def _take(self, event: EventBase | RecordedItem, batch: list[EventBase]) -> None:
        if not isinstance(event, EventBase):
            self.recorded.append(event)
            return
        if event.type in TERMINAL_TYPES:
            if self.terminal is None:
                self.terminal = event
            return
        if self.terminal is None:
            batch.append(event)
            if self.observer is not None:
                self.observer(event)

    async def _write(self, batch: list[EventBase]) -> None:
        try:
            usage = next((e for e in reversed(batch) if isinstance(e, Usage)), None)
            recorded, self.recorded = self.recorded, []
            async with self.database.transaction() as session:
                if recorded:
                    await store_items(session, run_id=self.run_id, items=recorded)
                batch = [await self._register(session, event) for event in batch]
                rows = await append_events(session, run_id=self.run_id, events=[to_new_event(e) for e in batch])
                if usage is not None:
                    self.usage = _totals(usage)
                    await record_usage(session, run_id=self.run_id, usage=self.usage)
        except Exception as exc:  # the database is down: keep the run going, report once
            if self.failed is None:
                log.error("cannot persist events of run %s: %s", self.run_id, exc)
            self.failed = exc
            return
        if not rows:
            return
        published: list[dict[str, Any]] = []
        for event, row in zip(batch, rows, strict=True):
            published.append(event_to_json(with_seq(event, row.seq)))
        self.last_seq = rows[-1].seq
        await self.bus.publish(self.run_id, self.session_id, published)

    async def _register(self, session: Any, event: EventBase) -> EventBase:
        """An artifact_created event also records the artifact (same transaction), so the artifacts API lists it."""
        if not isinstance(event, ArtifactCreated) or event.artifact_id is not None or self.user_id is None:
            return event
        row = await create_artifact(
            session,
            user_id=self.user_id,
            session_id=self.session_id,
            run_id=self.run_id,
            name=event.name,
            path=event.path,
            size=event.size_bytes,
            sha256=event.sha256,
            media_type=event.media_type,
        )
        return event.model_copy(update={"artifact_id": row.id})


def _totals(event: Usage) -> dict[str, Any]:
    """The usage event's numbers in the shape `runs.usage` has at the end of a turn (the meter's snapshot)."""
    return event.model_dump(mode="json", include=set(UsageTotals.model_fields))
