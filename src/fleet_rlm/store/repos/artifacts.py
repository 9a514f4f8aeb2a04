"""Artifacts (files a run produced in the workspace), always scoped by the owning user."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import Artifact
from fleet_rlm.store.repos._sql import Page

MAX_PAGE = 200
MAX_EXPORT = 10_000


async def create_artifact(
    session: AsyncSession,
    *,
    user_id: str,
    session_id: str,
    name: str,
    path: str,
    size: int,
    sha256: str,
    run_id: str | None = None,
    media_type: str | None = None,
    artifact_id: str | None = None,
) -> Artifact:
    """Record an artifact; `path` is relative to the workspace root (e.g. `artifacts/report.md`). `artifact_id`:
    an id the caller already handed out (a run's events announce the artifact before it is stored)."""
    row = Artifact(
        user_id=user_id,
        session_id=session_id,
        run_id=run_id,
        name=name,
        path=path,
        size=size,
        sha256=sha256,
        media_type=media_type,
    )
    if artifact_id:
        row.id = artifact_id
    session.add(row)
    await session.flush()
    return row


async def get_artifact(session: AsyncSession, *, user_id: str, artifact_id: str) -> Artifact | None:
    result = await session.execute(
        select(Artifact).where(col(Artifact.id) == artifact_id, col(Artifact.user_id) == user_id)
    )
    return result.scalar_one_or_none()


def _filters(user_id: str, session_id: str | None, run_id: str | None) -> list[Any]:
    where: list[Any] = [col(Artifact.user_id) == user_id]
    if session_id is not None:
        where.append(col(Artifact.session_id) == session_id)
    if run_id is not None:
        where.append(col(Artifact.run_id) == run_id)
    return where


async def list_artifacts(
    session: AsyncSession,
    *,
    user_id: str,
    session_id: str | None = None,
    run_id: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Page[Artifact]:
    """Newest first, optionally narrowed to one session and/or one run."""
    limit = max(1, min(limit, MAX_PAGE))
    offset = max(0, offset)
    where = _filters(user_id, session_id, run_id)
    total = (await session.execute(select(func.count()).select_from(Artifact).where(*where))).scalar_one()
    rows = await session.execute(
        select(Artifact)
        .where(*where)
        .order_by(col(Artifact.created_at).desc(), col(Artifact.id).desc())
        .limit(limit)
        .offset(offset)
    )
    return Page(items=list(rows.scalars()), total=total, limit=limit, offset=offset)


async def list_session_artifacts(session: AsyncSession, *, user_id: str, session_id: str) -> list[Artifact]:
    """Every artifact of a session, oldest first (for exports), bounded by MAX_EXPORT."""
    rows = await session.execute(
        select(Artifact)
        .where(*_filters(user_id, session_id, None))
        .order_by(col(Artifact.created_at), col(Artifact.id))
        .limit(MAX_EXPORT)
    )
    return list(rows.scalars())
