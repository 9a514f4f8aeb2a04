"""Users: looked up by their stable `name` (local user name or OIDC subject)."""

from __future__ import annotations

from sqlalchemy import bindparam
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import User
from fleet_rlm.store.repos._sql import insert_ignoring_conflict


async def get_user(session: AsyncSession, *, user_id: str) -> User | None:
    return await session.get(User, user_id)


_BY_NAME = select(User).where(col(User.name) == bindparam("name"))  # built once: every request resolves its user


async def get_user_by_name(session: AsyncSession, *, name: str) -> User | None:
    result = await session.execute(_BY_NAME, {"name": name})
    return result.scalar_one_or_none()


async def get_or_create_user(session: AsyncSession, *, name: str, display_name: str | None = None) -> User:
    """The user called `name`, created on first sight; safe when two requests race to create it."""
    existing = await get_user_by_name(session, name=name)
    if existing is not None:
        return existing
    await insert_ignoring_conflict(session, User(name=name, display_name=display_name), conflict_columns=["name"])
    user = await get_user_by_name(session, name=name)
    if user is None:  # pragma: no cover - the row was just inserted or already existed
        raise RuntimeError(f"user {name!r} vanished during get_or_create")
    return user
