"""A user's runtime overrides (`users.settings`): the defaults their new turns start from.

The store keeps them as an opaque JSON object; the API validates the keys and values and merges them over the
server's settings.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.store.models import User
from fleet_rlm.store.types import utcnow


async def get_user_settings(session: AsyncSession, *, user_id: str) -> dict[str, Any]:
    """The user's overrides ({} when none, or when the user does not exist)."""
    user = await session.get(User, user_id)
    return dict(user.settings or {}) if user is not None else {}


async def replace_user_settings(session: AsyncSession, *, user_id: str, settings: dict[str, Any]) -> dict[str, Any]:
    """Store `settings` as the user's whole override object; returns what was stored."""
    user = await session.get(User, user_id)
    if user is None:
        raise LookupError(f"user {user_id} not found")
    user.settings = dict(settings)
    user.updated_at = utcnow()
    await session.flush()
    return dict(user.settings)
