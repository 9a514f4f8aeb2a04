"""A user's runtime preferences: the server settings they may override for their own new turns.

Overrides live in `users.settings` (only these keys, validated on write and again on read, so a stale or
hand-edited value can never break a turn). A turn's own fields (TurnInput.max_iters...) still win over them.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.config import Settings
from fleet_rlm.schemas.runtime import RuntimeOverrides
from fleet_rlm.store.repos import user_settings

EDITABLE: tuple[str, ...] = tuple(RuntimeOverrides.model_fields)


def clean(raw: dict[str, Any] | None) -> dict[str, Any]:
    """The valid, non-null overrides in `raw` (others dropped one by one)."""
    kept: dict[str, Any] = {}
    for key, value in (raw or {}).items():
        if key not in EDITABLE or value is None:
            continue
        try:
            kept[key] = getattr(RuntimeOverrides.model_validate({key: value}), key)
        except ValidationError:
            continue
    return kept


def server_values(settings: Settings) -> dict[str, Any]:
    return {key: getattr(settings, key) for key in EDITABLE}


def apply(settings: Settings, overrides: dict[str, Any] | None) -> Settings:
    """`settings` with the user's overrides in place (what their next turn starts from)."""
    kept = clean(overrides)
    return settings.model_copy(update=kept) if kept else settings


async def load_overrides(s: AsyncSession, *, user_id: str) -> dict[str, Any]:
    return clean(await user_settings.get_user_settings(s, user_id=user_id))


async def user_turn_settings(s: AsyncSession, settings: Settings, *, user_id: str) -> Settings:
    """The server settings with this user's overrides applied."""
    return apply(settings, await load_overrides(s, user_id=user_id))


async def update_overrides(s: AsyncSession, *, user_id: str, changes: dict[str, Any]) -> dict[str, Any]:
    """Merge `changes` (validated by RuntimeOverrides; null removes a key) into the stored overrides."""
    merged = await load_overrides(s, user_id=user_id)
    for key, value in changes.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return await user_settings.replace_user_settings(s, user_id=user_id, settings=clean(merged))
