"""Optimization runs (status, live progress, durable cancel, results) and program versions (promotion).

Status changes are conditional UPDATEs like runs: a finished optimization run never changes again. At most one
version per module is promoted; promotion stamps `promoted_at` so rollback returns to the previous one.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.errors import InvalidTransitionError, NotFoundError
from fleet_rlm.store.models import OPTIMIZATION_STATUSES, OptimizationRun, ProgramVersion
from fleet_rlm.store.types import utcnow

ACTIVE = ("queued", "running")
ALLOWED_FROM: dict[str, tuple[str, ...]] = {
    "queued": (),
    "running": ("queued",),
    "succeeded": ("running",),
    "failed": ("queued", "running"),
    "cancelled": ("queued", "running"),
    "interrupted": ("queued", "running"),
}


async def create_run(
    session: AsyncSession, *, user_id: str, module: str, dataset_id: str | None, config: dict[str, Any]
) -> OptimizationRun:
    row = OptimizationRun(user_id=user_id, module=module, dataset_id=dataset_id, config=config)
    session.add(row)
    await session.flush()
    return row


async def get_run(session: AsyncSession, *, run_id: str, user_id: str | None = None) -> OptimizationRun | None:
    stmt = select(OptimizationRun).where(col(OptimizationRun.id) == run_id)
    if user_id is not None:
        stmt = stmt.where(col(OptimizationRun.user_id) == user_id)
    return (await session.execute(stmt.execution_options(populate_existing=True))).scalars().first()


async def list_runs(
    session: AsyncSession, *, user_id: str, module: str | None = None, limit: int = 100
) -> list[OptimizationRun]:
    """Newest first."""
    stmt = select(OptimizationRun).where(col(OptimizationRun.user_id) == user_id)
    if module is not None:
        stmt = stmt.where(col(OptimizationRun.module) == module)
    stmt = stmt.order_by(col(OptimizationRun.created_at).desc(), col(OptimizationRun.id)).limit(limit)
    return list((await session.execute(stmt)).scalars())


async def set_status(
    session: AsyncSession,
    *,
    run_id: str,
    status: str,
    error: dict[str, Any] | None = None,
    scores: dict[str, Any] | None = None,
    results: dict[str, Any] | None = None,
    program_version: str | None = None,
) -> OptimizationRun:
    """Move the run to `status`; raises InvalidTransitionError from a status it may not leave that way."""
    if status not in OPTIMIZATION_STATUSES:
        raise ValueError(f"unknown optimization status {status!r}")
    values: dict[str, Any] = {"status": status, "updated_at": utcnow()}
    if status not in ACTIVE:
        values["finished_at"] = utcnow()
    for key, value in (("error", error), ("scores", scores), ("results", results)):
        if value is not None:
            values[key] = value
    if program_version is not None:
        values["program_version"] = program_version
    result: Any = await session.execute(
        update(OptimizationRun)
        .where(col(OptimizationRun.id) == run_id, col(OptimizationRun.status).in_(ALLOWED_FROM[status]))
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    row = await get_run(session, run_id=run_id)
    if row is None:
        raise NotFoundError("optimization run", run_id)
    if not result.rowcount:
        raise InvalidTransitionError(run_id, row.status, status)
    return row


async def set_progress(session: AsyncSession, *, run_id: str, progress: dict[str, Any]) -> None:
    await session.execute(
        update(OptimizationRun)
        .where(col(OptimizationRun.id) == run_id)
        .values(progress=progress, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )


async def request_cancel(session: AsyncSession, *, run_id: str) -> bool:
    """Stamp a cancel request on an active run (idempotent); False when the run already finished."""
    result: Any = await session.execute(
        update(OptimizationRun)
        .where(
            col(OptimizationRun.id) == run_id,
            col(OptimizationRun.status).in_(ACTIVE),
            col(OptimizationRun.cancel_requested_at).is_(None),
        )
        .values(cancel_requested_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)


async def list_unfinished(session: AsyncSession) -> list[OptimizationRun]:
    stmt = select(OptimizationRun).where(col(OptimizationRun.status).in_(ACTIVE))
    return list((await session.execute(stmt)).scalars())


async def next_version_label(session: AsyncSession, *, module: str) -> str:
    """`<module>-v<n>`: n is one more than the module's number of saved versions."""
    count = (
        await session.execute(
            select(func.count()).select_from(ProgramVersion).where(col(ProgramVersion.module) == module)
        )
    ).scalar_one()
    return f"{module}-v{int(count) + 1}"


async def add_version(
    session: AsyncSession, *, module: str, version: str, program: dict[str, Any], manifest: dict[str, Any]
) -> ProgramVersion:
    row = ProgramVersion(module=module, version=version, program=program, manifest=manifest)
    session.add(row)
    await session.flush()
    return row


async def get_version(session: AsyncSession, *, module: str, version: str) -> ProgramVersion | None:
    stmt = select(ProgramVersion).where(col(ProgramVersion.module) == module, col(ProgramVersion.version) == version)
    return (await session.execute(stmt.execution_options(populate_existing=True))).scalars().first()


async def find_version(session: AsyncSession, *, version: str) -> ProgramVersion | None:
    """A version by its label alone (labels embed the module, so they are unique in practice)."""
    stmt = select(ProgramVersion).where(col(ProgramVersion.version) == version).limit(1)
    return (await session.execute(stmt.execution_options(populate_existing=True))).scalars().first()


async def list_versions(session: AsyncSession, *, module: str | None = None) -> list[ProgramVersion]:
    stmt = select(ProgramVersion)
    if module is not None:
        stmt = stmt.where(col(ProgramVersion.module) == module)
    stmt = stmt.order_by(col(ProgramVersion.created_at).desc(), col(ProgramVersion.id))
    return list((await session.execute(stmt.execution_options(populate_existing=True))).scalars())


async def promoted_versions(session: AsyncSession) -> list[ProgramVersion]:
    stmt = select(ProgramVersion).where(col(ProgramVersion.promoted).is_(True))
    return list((await session.execute(stmt.execution_options(populate_existing=True))).scalars())


async def promote(session: AsyncSession, *, module: str, version: str) -> ProgramVersion:
    """Make `version` the module's promoted one (demoting the current one, which keeps its promoted_at)."""
    row = await get_version(session, module=module, version=version)
    if row is None:
        raise NotFoundError("program version", f"{module}:{version}")
    await session.execute(
        update(ProgramVersion)
        .where(col(ProgramVersion.module) == module, col(ProgramVersion.id) != row.id)
        .values(promoted=False)
        .execution_options(synchronize_session=False)
    )
    row.promoted, row.promoted_at = True, utcnow()
    await session.flush()
    return row


async def rollback(session: AsyncSession, *, module: str) -> ProgramVersion | None:
    """Withdraw the promoted version (it is not returned to again) and re-promote the one promoted before it.

    Returns the version now promoted, or None when the module is back on its built-in program."""
    current = next((v for v in await promoted_versions(session) if v.module == module), None)
    if current is not None:
        current.promoted, current.promoted_at = False, None
        await session.flush()
    earlier = [v for v in await list_versions(session, module=module) if v.promoted_at is not None]
    if not earlier:
        return None
    previous = max(earlier, key=lambda v: v.promoted_at)  # type: ignore[arg-type, return-value]
    previous.promoted, previous.promoted_at = True, utcnow()
    await session.flush()
    return previous
