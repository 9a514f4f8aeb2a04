"""Deliver-then-persist for one run: the runtime's thread-safe sink on one side, live subscribers and the store
on the other.

The runtime emits from worker threads; each event reaches the event loop in emission order, gets the run's next
`seq` there (the recorder is the run's only writer while it runs, so it numbers from the run's `last_seq`) and is
handed to this process's subscribers at once (`LocalBus.deliver_unsaved`); the server's `EventWriter` stores it
in the background, sharing transactions with every other running run. A follower that reconnects or falls
behind reads the database and then the bus's unsaved tail, so it misses and repeats nothing; other replicas hear
of events only once they are committed. The terminal event (turn_finished, ...) is held back: the executor
hands it to `finish()` with the run's final status and answer, which the writer stores in one transaction
(with whatever events are still waiting) and only then delivers it. Each `usage` event also updates
`runs.usage` in its transaction, so a run killed mid-turn (or failing outside the runtime) still reports what it
spent up to then. The runtime's LM recordings (`record_lm`) ride the same path and are stored with the events
they arrive with; an `artifact_created` event gets its artifact's id here and the artifact row is written with
it. The root turn's `context_loaded` events are kept (`loaded`): the sources the turn added join the session.
Every part it hands the writer carries the run's claim (`fence`), so a recorder whose run moved writes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from fleet_rlm.events import TERMINAL_TYPES, ArtifactCreated, ContextLoaded, EventBase, Usage, UsageTotals
from fleet_rlm.runtime.lm_exchange import RecordedItem
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.services.live.codec import numbered
from fleet_rlm.services.turns.event_writer import EventWriter
from fleet_rlm.services.turns.final_writes import FinalWrites
from fleet_rlm.store.repos.events import NumberedEvent
from fleet_rlm.store.repos.runs import Fence
from fleet_rlm.store.types import new_id


class RunRecorder:
    """`emit` is the runtime's EventSink; `close()` waits until everything emitted so far is stored."""

    def __init__(
        self,
        writer: EventWriter,
        bus: LocalBus,
        *,
        run_id: str,
        session_id: str,
        user_id: str | None = None,
        observer: Callable[[EventBase], None] | None = None,
        last_seq: int = 0,
        fence: Fence | None = None,
    ) -> None:
        self.writer = writer
        self.fence = fence  # (owner, claim epoch) of the run while this recorder writes it
        self.observer = observer  # sees every recorded event but the terminal one, in order (the run's trace)
        self.user_id = user_id
        self.bus = bus
        self.run_id = run_id
        self.session_id = session_id
        self.loop = asyncio.get_running_loop()
        self.last_seq = last_seq
        self.failed: BaseException | None = None
        self.terminal: EventBase | None = None
        self.usage: dict[str, Any] | None = None  # the latest usage event's totals
        self.loaded: list[ContextLoaded] = []  # the root turn's context_loaded events, one per source in order
        self.closed = False
        self._outbox: list[dict[str, Any]] = []  # numbered events not yet handed to subscribers (this loop turn)

    def record_lm(self, item: RecordedItem) -> None:
        """The runtime's RecordingSink: LM recordings travel the event path and are stored with its events."""
        self.emit(item)

    def emit(self, event: EventBase | RecordedItem) -> None:
        """Thread-safe; callable from the runtime's worker threads and from the loop itself."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self._accept(event)
        else:
            self.loop.call_soon_threadsafe(self._accept, event)

    async def record(self, event: EventBase) -> None:
        """Emit from async code (the service's own lifecycle events)."""
        self.emit(event)

    async def close(self) -> None:
        """Stop taking events (later emits are dropped): everything emitted so far is delivered and queued."""
        await asyncio.sleep(0)  # callbacks scheduled by the runtime's last emits run first
        self._deliver()
        self.closed = True

    async def finish(self, terminal: EventBase, writes: FinalWrites) -> bool:
        """Store the terminal event with the run's final `writes` (its `last_seq` becomes the terminal event's)
        and everything still waiting in one transaction, then deliver it; False when that transaction failed
        (nothing of it is delivered)."""
        await self.close()
        part = self.writer.part(self.run_id, self.session_id, self.fence)
        self.last_seq += 1
        row, body = numbered(terminal, self.last_seq)
        part.events.append(NumberedEvent(self.run_id, self.last_seq, row))
        committed: list[bool] = []

        def deliver() -> None:
            committed.append(True)
            self.bus.unsaved.end_run(self.run_id)  # a follower subscribing from now on reads the database
            self.bus.deliver(self.run_id, self.session_id, [body])

        part.finish, part.after_commit = writes, deliver
        self.failed = await self.writer.flush(self.run_id) or self.failed
        self.bus.unsaved.end_run(self.run_id)  # already ended if delivered; else nothing will come through the bus
        self.bus.unsaved.saved(self.run_id, self.last_seq)  # stored, or given up on: no longer a live tail
        return bool(committed)

    def _accept(self, item: EventBase | RecordedItem) -> None:
        if self.closed:
            return
        part = self.writer.part(self.run_id, self.session_id, self.fence)
        if not isinstance(item, EventBase):
            part.recorded.append(item)
            self.writer.wake()
            return
        if item.type in TERMINAL_TYPES:
            if self.terminal is None:
                self.terminal = item
            return
        if self.terminal is not None:
            return
        if self.observer is not None:
            self.observer(item)
        event = self._register(item, part.artifacts)
        if isinstance(event, Usage):
            part.usage = self.usage = _totals(event)
        elif isinstance(event, ContextLoaded) and event.depth == 0:
            self.loaded.append(event)
        self.last_seq += 1
        row, body = numbered(event, self.last_seq)
        part.events.append(NumberedEvent(self.run_id, self.last_seq, row))
        if not self._outbox:
            self.loop.call_soon(self._deliver)
        self._outbox.append(body)
        self.writer.wake()

    def _deliver(self) -> None:
        """Hand this loop turn's events to subscribers as one batch."""
        if self._outbox:
            batch, self._outbox = self._outbox, []
            self.bus.deliver_unsaved(self.run_id, self.session_id, batch)

    def _register(self, event: EventBase, artifacts: list[dict[str, Any]]) -> EventBase:
        """An artifact_created event also records the artifact (same transaction), so the artifacts API lists it."""
        if not isinstance(event, ArtifactCreated) or event.artifact_id is not None or self.user_id is None:
            return event
        artifact_id = new_id()
        artifacts.append(
            {
                "artifact_id": artifact_id,
                "user_id": self.user_id,
                "name": event.name,
                "path": event.path,
                "size": event.size_bytes,
                "sha256": event.sha256,
                "media_type": event.media_type,
            }
        )
        return event.model_copy(update={"artifact_id": artifact_id})


def _totals(event: Usage) -> dict[str, Any]:
    """The usage event's numbers in the shape `runs.usage` has at the end of a turn (the meter's snapshot)."""
    return event.model_dump(mode="json", include=set(UsageTotals.model_fields))
