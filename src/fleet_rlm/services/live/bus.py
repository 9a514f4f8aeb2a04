"""In-process fan-out of persisted events to live subscribers, keyed by run and by session.

Publishers call `publish` after the events are committed; a run's recorder instead calls `deliver_unsaved` as
soon as it emits (the events wait in `unsaved` until `saved` says their transaction committed), so a subscriber
that falls behind (or joins late) can always fill the gap from the database plus that tail. Queues are bounded:
a subscriber that stops reading is marked `overflowed` and must re-read instead of stalling the run. Other
processes hear of events only once they are committed (`saved`, `publish`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from fleet_rlm.services.live.unsaved import UnsavedEvents

SUBSCRIBER_QUEUE = 2048

CancelHandler = Callable[[str], Awaitable[None] | None]


@dataclass(eq=False)
class Subscription:
    """Batches of event JSON (each with `seq`) for one run or one session."""

    run_id: str | None
    session_id: str | None
    queue: asyncio.Queue[list[dict[str, Any]]] = field(default_factory=lambda: asyncio.Queue(SUBSCRIBER_QUEUE))
    overflowed: bool = False
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)

    def offer(self, batch: list[dict[str, Any]]) -> None:
        try:
            self.queue.put_nowait(batch)
        except asyncio.QueueFull:
            self.overflowed = True
        self.wakeup.set()


class LocalBus:
    """Single-process bus (SQLite, or one server on Postgres). Subclasses add cross-process delivery."""

    def __init__(self) -> None:
        self._by_run: dict[str, set[Subscription]] = {}
        self._by_session: dict[str, set[Subscription]] = {}
        self._cancel_handlers: list[CancelHandler] = []
        self.unsaved = UnsavedEvents()

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def subscribe(self, *, run_id: str | None = None, session_id: str | None = None) -> Subscription:
        subscription = Subscription(run_id=run_id, session_id=session_id)
        if run_id:
            self._by_run.setdefault(run_id, set()).add(subscription)
        if session_id:
            self._by_session.setdefault(session_id, set()).add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        for index, key in ((self._by_run, subscription.run_id), (self._by_session, subscription.session_id)):
            if key and key in index:
                index[key].discard(subscription)
                if not index[key]:
                    del index[key]

    def deliver(self, run_id: str, session_id: str, batch: list[dict[str, Any]]) -> None:
        """Hand committed events to this process's subscribers."""
        targets = set(self._by_run.get(run_id, ())) | set(self._by_session.get(session_id, ()))
        for subscription in targets:
            subscription.offer(batch)

    async def publish(self, run_id: str, session_id: str, batch: list[dict[str, Any]]) -> None:
        self.deliver(run_id, session_id, batch)

    def deliver_unsaved(self, run_id: str, session_id: str, batch: list[dict[str, Any]]) -> None:
        """Hand events to this process's subscribers before they are committed (they wait in `unsaved`)."""
        self.unsaved.add(run_id, batch)
        self.deliver(run_id, session_id, batch)

    async def saved(self, runs: list[tuple[str, str, int]]) -> None:
        """(run_id, session_id, last seq) of events `deliver_unsaved` handed out that are committed now."""
        for run_id, _session_id, seq in runs:
            self.unsaved.saved(run_id, seq)

    def on_cancel(self, handler: CancelHandler) -> None:
        self._cancel_handlers.append(handler)

    async def announce_cancel(self, run_id: str) -> None:
        """Tell every process (here: this one) that `run_id` should stop."""
        await self.dispatch_cancel(run_id)

    async def dispatch_cancel(self, run_id: str) -> None:
        for handler in list(self._cancel_handlers):
            result = handler(run_id)
            if asyncio.iscoroutine(result):
                await result

    @property
    def subscriber_count(self) -> int:
        return len({sub for subs in (*self._by_run.values(), *self._by_session.values()) for sub in subs})
