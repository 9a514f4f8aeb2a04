"""Optimization runs: status, live progress, durable cancel, results (program versions: `repos.programs`).

Status changes are conditional UPDATEs like runs: a finished optimization run never changes again.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.events.status import ACTIVE, ALLOWED_FROM, RunStatus, parse_status
from fleet_rlm.store.errors import InvalidTransitionError, NotFoundError
from fleet_rlm.store.models import OptimizationRun
from fleet_rlm.store.types import utcnow


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
    owner: str | None = None,
) -> OptimizationRun:
    """Move the run to `status` (running: claimed by `owner`, heartbeat stamped); raises InvalidTransitionError
    from a status it may not leave that way."""
    target = parse_status(status)
    values: dict[str, Any] = {"status": target.value, "updated_at": utcnow()}
    if target is RunStatus.RUNNING:
        values["heartbeat_at"] = values["updated_at"]
    if owner is not None:
        values["owner"] = owner
    if target not in ACTIVE:
        values["finished_at"] = utcnow()
    for key, value in (("error", error), ("scores", scores), ("results", results)):
        if value is not None:
            values[key] = value
    if program_version is not None:
        values["program_version"] = program_version
    result: Any = await session.execute(
        update(OptimizationRun)
        .where(col(OptimizationRun.id) == run_id, col(OptimizationRun.status).in_(ALLOWED_FROM[target]))
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


async def heartbeat(session: AsyncSession, *, run_ids: Collection[str], owner: str | None = None) -> set[str]:
    """Stamp heartbeat_at on those of `run_ids` that are running (owned by `owner`, when given), in one UPDATE;
    returns the ids among them with a durable cancel request."""
    if not run_ids:
        return set()
    ids = list(run_ids)
    conditions = [col(OptimizationRun.id).in_(ids), col(OptimizationRun.status) == RunStatus.RUNNING]
    if owner is not None:
        conditions.append(col(OptimizationRun.owner) == owner)
    await session.execute(
        update(OptimizationRun)
        .where(*conditions)
        .values(heartbeat_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    rows = await session.execute(
        select(col(OptimizationRun.id)).where(
            col(OptimizationRun.id).in_(ids), col(OptimizationRun.cancel_requested_at).is_not(None)
        )
    )
    return {str(row[0]) for row in rows}


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
