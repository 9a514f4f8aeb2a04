"""Optimization runs as jobs (`services/jobs`): claimed with an owner, beating, progress on the row and the bus,
swept to `interrupted` by the same sweeper as turns when their server died."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.services.jobs.job import FINISHED_EVENT, channel
from fleet_rlm.services.jobs.sweep import JobRow, Orphaned
from fleet_rlm.services.jobs.table import TableJobs
from fleet_rlm.store import Database, InvalidTransitionError
from fleet_rlm.store.repos import optimization as repo

KIND = "optimization"
INTERRUPTED = {"code": "optimization_interrupted", "message": "the server stopped during the run"}


class OptimizationJobs(TableJobs):
    """The `optimization_runs` table as a JobStore and a JobKind."""

    kind = KIND

    async def claim(self, session: AsyncSession, job_id: str, owner: str) -> None:
        await repo.set_status(session, run_id=job_id, status="running", owner=owner)

    async def beat(self, session: AsyncSession, job_ids: Collection[str], owner: str) -> set[str]:
        return await repo.heartbeat(session, run_ids=job_ids, owner=owner)

    async def save_progress(self, session: AsyncSession, job_id: str, progress: dict[str, Any]) -> None:
        await repo.set_progress(session, run_id=job_id, progress=progress)

    async def unfinished(self, database: Database) -> list[JobRow]:
        async with database.session() as session:
            rows = await repo.list_unfinished(session)
        return [
            JobRow(id=r.id, owner=r.owner, beat_at=r.heartbeat_at or r.updated_at, queued=r.status == "queued")
            for r in rows
        ]

    async def interrupt(self, row: JobRow, why: Orphaned) -> bool:
        try:
            async with self.database.transaction() as session:
                await repo.set_status(session, run_id=row.id, status="interrupted", error=INTERRUPTED)
        except InvalidTransitionError:
            return False
        notice = {"type": FINISHED_EVENT, "seq": 1, "job_id": row.id, "kind": KIND}
        await self.bus.publish(channel(KIND, row.id), "", [notice])
        return True
