"""Program versions and their promotions, scoped by user; and the counts /optimization/status reports.

A version belongs to the user whose run saved it. A promotion puts a version in one scope: a user's own
(`user_id` set: only their turns) or global (`user_id` NULL: everyone's, an admin action). Per module and scope
the current promotion is the latest one not withdrawn; a rollback withdraws it, so the one before applies again.
A user's turns run their own current version of a module, else the global one, else the built-in.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, or_
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.events.status import ACTIVE
from fleet_rlm.store.errors import NotFoundError
from fleet_rlm.store.models import OptimizationRun, ProgramPromotion, ProgramVersion
from fleet_rlm.store.types import utcnow

Scope = str | None
"""A user id (that user's own scope) or None (global)."""


async def next_version_label(session: AsyncSession, *, module: str) -> str:
    """`<module>-v<n>`: n is one more than the module's number of saved versions (labels are unique)."""
    count = (
        await session.execute(
            select(func.count()).select_from(ProgramVersion).where(col(ProgramVersion.module) == module)
        )
    ).scalar_one()
    return f"{module}-v{int(count) + 1}"


async def add_version(
    session: AsyncSession,
    *,
    user_id: str | None,
    module: str,
    version: str,
    program: dict[str, Any],
    manifest: dict[str, Any],
) -> ProgramVersion:
    row = ProgramVersion(user_id=user_id, module=module, version=version, program=program, manifest=manifest)
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


def _latest_per_scope(rows: Iterable[ProgramPromotion]) -> dict[tuple[str, Scope], ProgramPromotion]:
    current: dict[tuple[str, Scope], ProgramPromotion] = {}
    for row in rows:
        key = (row.module, row.user_id)
        best = current.get(key)
        if best is None or (row.promoted_at, row.id) > (best.promoted_at, best.id):
            current[key] = row
    return current


async def current_promotions(
    session: AsyncSession, *, user_id: str | None, everyone: bool = False
) -> dict[tuple[str, Scope], ProgramPromotion]:
    """(module, scope) -> the scope's current promotion, for the global scope and `user_id`'s own (or, with
    `everyone`, every user's scope)."""
    stmt = select(ProgramPromotion).where(col(ProgramPromotion.withdrawn_at).is_(None))
    if not everyone:
        scope = col(ProgramPromotion.user_id).is_(None)
        stmt = stmt.where(or_(scope, col(ProgramPromotion.user_id) == user_id) if user_id else scope)
    rows = (await session.execute(stmt.execution_options(populate_existing=True))).scalars()
    return _latest_per_scope(rows)


async def versions_by_id(session: AsyncSession, ids: Iterable[str]) -> dict[str, ProgramVersion]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    stmt = select(ProgramVersion).where(col(ProgramVersion.id).in_(wanted))
    return {row.id: row for row in (await session.execute(stmt.execution_options(populate_existing=True))).scalars()}


async def in_effect(session: AsyncSession, *, user_id: str | None) -> dict[str, ProgramVersion]:
    """module -> the version `user_id`'s turns run: their own current promotion, else the global one."""
    current = await current_promotions(session, user_id=user_id)
    chosen: dict[str, ProgramPromotion] = {}
    for (module, scope), promotion in current.items():
        if scope is not None or module not in chosen:
            chosen[module] = promotion
    versions = await versions_by_id(session, (p.version_id for p in chosen.values()))
    return {module: versions[p.version_id] for module, p in chosen.items() if p.version_id in versions}


async def visible_versions(session: AsyncSession, *, user_id: str, module: str | None = None) -> list[ProgramVersion]:
    """Versions `user_id` may see: their own, and any with a live global promotion. Newest first."""
    global_ids = select(ProgramPromotion.version_id).where(
        col(ProgramPromotion.user_id).is_(None), col(ProgramPromotion.withdrawn_at).is_(None)
    )
    stmt = select(ProgramVersion).where(
        or_(col(ProgramVersion.user_id) == user_id, col(ProgramVersion.id).in_(global_ids))
    )
    if module is not None:
        stmt = stmt.where(col(ProgramVersion.module) == module)
    stmt = stmt.order_by(col(ProgramVersion.created_at).desc(), col(ProgramVersion.id))
    return list((await session.execute(stmt.execution_options(populate_existing=True))).scalars())


async def promote(
    session: AsyncSession, *, module: str, version: str, scope: Scope, promoted_by: str | None
) -> ProgramPromotion:
    """Make `version` the current one of `module` in `scope` (earlier promotions stay, for rollback)."""
    row = await get_version(session, module=module, version=version)
    if row is None:
        raise NotFoundError("program version", f"{module}:{version}")
    promotion = ProgramPromotion(
        version_id=row.id, module=module, user_id=scope, promoted_by=promoted_by, promoted_at=utcnow()
    )
    session.add(promotion)
    await session.flush()
    return promotion


async def rollback(session: AsyncSession, *, module: str, scope: Scope) -> ProgramPromotion | None:
    """Withdraw the scope's current promotion of `module` (it is not returned to again). Returns the scope's
    promotion now current (the one before), or None when the scope has none left."""
    current = await current_promotions(session, user_id=scope)
    mine = current.get((module, scope))
    if mine is not None:
        mine.withdrawn_at = utcnow()
        await session.flush()
    return (await current_promotions(session, user_id=scope)).get((module, scope))


async def count_optimization_runs(session: AsyncSession, *, user_id: str, statuses: Iterable[str] = ACTIVE) -> int:
    """The user's optimization runs in one of `statuses`."""
    stmt = (
        select(func.count())
        .select_from(OptimizationRun)
        .where(col(OptimizationRun.user_id) == user_id, col(OptimizationRun.status).in_(statuses))
    )
    return int((await session.execute(stmt)).scalar_one())


async def count_program_versions(session: AsyncSession, *, user_id: str, promoted_only: bool = False) -> int:
    """Versions `user_id` may see (all of them, or only those their turns run)."""
    if promoted_only:
        return len(await in_effect(session, user_id=user_id))
    return len(await visible_versions(session, user_id=user_id))
