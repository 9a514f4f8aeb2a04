"""Workspaces: each user gets a default one on first sight; its durable roots live on disk at `root_path`.

The store only records the row; the caller (the API) decides where the directory lives and creates it, so the
store never needs to know the on-disk layout.
"""

from __future__ import annotations

from sqlalchemy import bindparam
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import Workspace
from fleet_rlm.store.repos._sql import insert_ignoring_conflict

DEFAULT_SLUG = "default"


async def get_workspace(session: AsyncSession, *, user_id: str, workspace_id: str) -> Workspace | None:
    result = await session.execute(
        select(Workspace).where(col(Workspace.id) == workspace_id, col(Workspace.user_id) == user_id)
    )
    return result.scalar_one_or_none()


_BY_SLUG = select(Workspace).where(
    col(Workspace.user_id) == bindparam("user_id"), col(Workspace.slug) == bindparam("slug")
)


async def get_workspace_by_slug(session: AsyncSession, *, user_id: str, slug: str) -> Workspace | None:
    result = await session.execute(_BY_SLUG, {"user_id": user_id, "slug": slug})
    return result.scalar_one_or_none()


async def get_or_create_workspace(
    session: AsyncSession,
    *,
    user_id: str,
    workspace_id: str,
    root_path: str,
    slug: str = DEFAULT_SLUG,
    name: str = "Default",
) -> Workspace:
    """The user's workspace called `slug`, created with `workspace_id`/`root_path` if it does not exist yet.

    Safe when two requests race: the loser gets the winner's row (and its id and root, not the ones it passed).
    """
    existing = await get_workspace_by_slug(session, user_id=user_id, slug=slug)
    if existing is not None:
        return existing
    row = Workspace(id=workspace_id, user_id=user_id, name=name, slug=slug, root_path=root_path)
    await insert_ignoring_conflict(session, row, conflict_columns=["user_id", "slug"])
    created = await get_workspace_by_slug(session, user_id=user_id, slug=slug)
    if created is None:  # pragma: no cover - inserted or already present
        raise RuntimeError(f"workspace {slug!r} of user {user_id} vanished during get_or_create")
    return created
