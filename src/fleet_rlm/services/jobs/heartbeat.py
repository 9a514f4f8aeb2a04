"""One heartbeat per server and job kind: every job of that kind running here is stamped in one transaction.

A beat per job meant one transaction per running job every `run_heartbeat_s`; during a burst of turns those
were about a tenth of the API process's CPU (docs/performance.md). One task now beats all of this process's
jobs of a kind together, and the same beat reads which of them carry a durable cancel request, so a cancel
recorded by any replica reaches its job even when the bus message was lost. The task runs only while jobs are
registered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.store import Database

log = logging.getLogger(__name__)


class Beats(Protocol):
    """The part of a job kind's store a heartbeat needs."""

    kind: str

    async def beat(self, session: AsyncSession, job_ids: Collection[str], owner: str) -> set[str]:
        """Stamp liveness on the running ones of `job_ids`; returns those with a durable cancel request."""


class Heartbeats:
    def __init__(self, store: Beats, database: Database, *, owner: str, interval_s: float) -> None:
        self.store = store
        self.database = database
        self.owner = owner
        self.interval_s = interval_s
        self._jobs: dict[str, Callable[[], None]] = {}
        self._task: asyncio.Task[None] | None = None

    def register(self, job_id: str, on_cancel: Callable[[], None]) -> None:
        """Beat `job_id` from now on; `on_cancel` runs when a beat finds a cancel request on its row."""
        self._jobs[job_id] = on_cancel
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"{self.store.kind}-heartbeat")

    def unregister(self, job_id: str) -> None:
        self._jobs.pop(job_id, None)
        if not self._jobs and self._task is not None:
            self._task.cancel()  # nothing left to beat; the next register starts a new task
            self._task = None

    async def _run(self) -> None:
        while self._jobs:
            await asyncio.sleep(self.interval_s)
            ids = list(self._jobs)
            try:
                async with self.database.transaction() as session:
                    cancelled = await self.store.beat(session, ids, self.owner)
            except Exception as exc:  # a database hiccup must not kill the jobs; the next beat retries
                log.warning("heartbeat of %d %s job(s) failed: %s", len(ids), self.store.kind, exc)
                continue
            for job_id in cancelled:
                on_cancel = self._jobs.get(job_id)
                if on_cancel is not None:
                    on_cancel()
