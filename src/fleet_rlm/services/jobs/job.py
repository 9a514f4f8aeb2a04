"""A running job: claimed by this process, beating while it runs, reporting progress live.

`Job.running()` claims the row (status running, owner stamped), then is beaten by the server's `Heartbeats`
for its kind (one transaction for all of them); a beat that finds a durable cancel request on the row calls
`on_cancel`, so a cancel recorded by any replica reaches the one running the job even when the bus message was
lost. `report()` may be called from any thread (GEPA and the
runtime run on worker threads): the latest progress is written to the row and then published on the bus, one
write per change, coalesced while a write is in flight. Each kind finishes its job in its own transaction (a
turn commits its answer and terminal event with the status) and then calls `announce()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import asynccontextmanager
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.services.jobs.heartbeat import Heartbeats
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.store import Database

log = logging.getLogger(__name__)

PROGRESS_EVENT = "job_progress"
FINISHED_EVENT = "job_finished"


class JobStore(Protocol):
    """How one kind of job keeps its row: claimed, beating, progress."""

    kind: str

    async def claim(self, session: AsyncSession, job_id: str, owner: str) -> None:
        """Move the job to running, owned by `owner` (raises when it may not run any more)."""

    async def beat(self, session: AsyncSession, job_ids: Collection[str], owner: str) -> set[str]:
        """Stamp liveness on the running ones; returns the ids with a durable cancel request on their row."""

    async def save_progress(self, session: AsyncSession, job_id: str, progress: dict[str, Any]) -> None:
        """Store the job's latest progress (what a follower reads after a notice)."""


def channel(kind: str, job_id: str) -> str:
    """The bus key of a job's progress notices (turns publish their events under the run id itself)."""
    return f"{kind}:{job_id}"


class Job:
    def __init__(
        self,
        store: JobStore,
        database: Database,
        bus: LocalBus,
        *,
        job_id: str,
        owner: str,
        heartbeats: Heartbeats,
        on_cancel: Callable[[], None],
    ) -> None:
        self.store = store
        self.database = database
        self.bus = bus
        self.id = job_id
        self.owner = owner
        self.heartbeats = heartbeats
        self.on_cancel = on_cancel
        self.channel = channel(store.kind, job_id)
        self._latest: dict[str, Any] | None = None
        self._written: dict[str, Any] | None = None
        self._changed = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._notices = 0

    @asynccontextmanager
    async def running(self, *, claimed: bool = False) -> AsyncIterator[Job]:
        """Claim the job (unless its creator already did, `claimed`), then beat and publish progress until the
        block ends (progress flushed on exit)."""
        if not claimed:
            async with self.database.transaction() as session:
                await self.store.claim(session, self.id, self.owner)
        self._loop = asyncio.get_running_loop()
        self.heartbeats.register(self.id, self.on_cancel)
        pump = self._loop.create_task(self._pump())
        try:
            yield self
        finally:
            self.heartbeats.unregister(self.id)
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump
            await self._write()

    def report(self, progress: dict[str, Any]) -> None:
        """Record new progress (thread-safe); it is written and published right away."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        loop.call_soon_threadsafe(self._set, progress)

    def _set(self, progress: dict[str, Any]) -> None:
        self._latest = progress
        self._changed.set()

    async def _pump(self) -> None:
        while True:
            await self._changed.wait()
            self._changed.clear()
            await self._write()

    async def _write(self) -> None:
        current = self._latest
        if current is None or current == self._written:
            return
        try:
            async with self.database.transaction() as session:
                await self.store.save_progress(session, self.id, current)
        except Exception as exc:  # a database hiccup must not stop the job; the next change retries
            log.warning("progress of %s %s not written: %s", self.store.kind, self.id, exc)
            return
        self._written = current
        await self._publish(PROGRESS_EVENT, {"progress": current})

    async def announce(self) -> None:
        """Tell followers the job's row reached its final state (call after the finishing transaction)."""
        await self._publish(FINISHED_EVENT, {})

    async def _publish(self, type_: str, body: dict[str, Any]) -> None:
        self._notices += 1
        notice = {"type": type_, "seq": self._notices, "job_id": self.id, "kind": self.store.kind, **body}
        try:
            await self.bus.publish(self.channel, "", [notice])
        except Exception as exc:  # followers fall back to their slow re-read
            log.warning("progress notice of %s %s not published: %s", self.store.kind, self.id, exc)
