"""Crash recovery for every kind of job: a job whose server died becomes `interrupted`, so nothing waits forever.

A job is orphaned when its owner process on this host is gone, or when its last beat is older than the stale
limit (an owner on another host that stopped beating); jobs running in this process are never touched. One
sweeper runs at startup and periodically over all kinds (turns and optimization runs); each kind marks its own
rows interrupted (a turn also appends its turn_interrupted event).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Container, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, Protocol

from fleet_rlm.services.jobs.owner import owner_is_dead
from fleet_rlm.store import Database, utcnow

log = logging.getLogger(__name__)

Orphaned = Literal["owner_stopped", "heartbeat_lost"]


@dataclass(frozen=True)
class JobRow:
    """What the sweeper needs of an unfinished job."""

    id: str
    owner: str | None
    beat_at: datetime
    session_id: str | None = None
    queued: bool = False  # not claimed yet


class JobKind(Protocol):
    kind: str

    @property
    def active(self) -> Container[str]:
        """Ids of this kind's jobs running in this process."""

    async def unfinished(self, database: Database) -> list[JobRow]:
        """Every queued or running job of this kind."""

    async def interrupt(self, row: JobRow, why: Orphaned) -> bool:
        """Mark the job interrupted; False if it finished meanwhile."""


def orphaned(
    row: JobRow, *, current_owner: str, stale_before: datetime, active: Container[str], queue: bool = False
) -> Orphaned | None:
    if row.id in active or (queue and row.queued):  # on the job queue, a queued job waits for a worker
        return None
    if owner_is_dead(row.owner, current_owner=current_owner):
        return "owner_stopped"
    if row.beat_at < stale_before:
        return "heartbeat_lost"
    return None


async def sweep(
    database: Database, kinds: Sequence[JobKind], *, current_owner: str, stale_after_s: float, queue: bool = False
) -> int:
    """Mark every orphaned job of every kind interrupted; returns how many. With `queue` (queue execution), queued
    jobs are left to the job queue: they wait for a worker, however long."""
    stale_before = utcnow() - timedelta(seconds=stale_after_s)
    count = 0
    for kind in kinds:
        for row in await kind.unfinished(database):
            why = orphaned(row, current_owner=current_owner, stale_before=stale_before, active=kind.active, queue=queue)
            if why is not None and await kind.interrupt(row, why):
                log.warning("%s %s was orphaned (%s) and recovered", kind.kind, row.id, why)
                count += 1
    return count


async def sweep_forever(
    database: Database, kinds: Sequence[JobKind], *, current_owner: str, stale_after_s: float, queue: bool = False
) -> None:
    """Periodic recovery for replicas that die while others keep serving."""
    interval = max(1.0, stale_after_s / 3)
    while True:
        await asyncio.sleep(interval)
        try:
            await sweep(database, kinds, current_owner=current_owner, stale_after_s=stale_after_s, queue=queue)
        except Exception as exc:  # keep sweeping; the database may come back
            log.warning("job recovery sweep failed: %s", exc)
