"""Read-only counts over the optimization tables (what /optimization/status reports truthfully)."""

from __future__ import annotations

from sqlalchemy import func
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import OptimizationRun, ProgramVersion


async def count_optimization_runs(
    session: AsyncSession, *, user_id: str, statuses: tuple[str, ...] = ("queued", "running")
) -> int:
    """The user's optimization runs in one of `statuses`."""
    stmt = (
        select(func.count())
        .select_from(OptimizationRun)
        .where(col(OptimizationRun.user_id) == user_id, col(OptimizationRun.status).in_(statuses))
    )
    return int((await session.execute(stmt)).scalar_one())


async def count_program_versions(session: AsyncSession, *, promoted_only: bool = False) -> int:
    """Saved program versions (all, or only the promoted ones)."""
    stmt = select(func.count()).select_from(ProgramVersion)
    if promoted_only:
        stmt = stmt.where(col(ProgramVersion.promoted).is_(True))
    return int((await session.execute(stmt)).scalar_one())
