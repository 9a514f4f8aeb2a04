"""LLM profiles and role bindings of one user. Keys and header values arrive already encrypted: the store never
sees a clear key or header (and a profile referring to the server's environment holds none: `key_source` names it).

A profile name is unique per user; a binding ties one role to one of the user's profiles (deleting the profile
deletes its bindings by cascade). Every function is scoped by `user_id`, so another user's row is "not found".
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, delete
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import LlmProfile, RoleBinding
from fleet_rlm.store.repos._sql import UNSET
from fleet_rlm.store.types import utcnow

_PROFILES = select(LlmProfile).where(col(LlmProfile.user_id) == bindparam("user_id")).order_by(col(LlmProfile.name))
_BINDINGS = select(RoleBinding).where(col(RoleBinding.user_id) == bindparam("user_id")).order_by(col(RoleBinding.role))


async def list_profiles(session: AsyncSession, *, user_id: str) -> list[LlmProfile]:
    result = await session.execute(_PROFILES, {"user_id": user_id})
    return list(result.scalars())


async def get_profile(session: AsyncSession, *, user_id: str, profile_id: str) -> LlmProfile | None:
    result = await session.execute(
        select(LlmProfile).where(col(LlmProfile.id) == profile_id, col(LlmProfile.user_id) == user_id)
    )
    return result.scalar_one_or_none()


async def get_profile_by_name(session: AsyncSession, *, user_id: str, name: str) -> LlmProfile | None:
    result = await session.execute(
        select(LlmProfile).where(col(LlmProfile.user_id) == user_id, col(LlmProfile.name) == name)
    )
    return result.scalar_one_or_none()


async def create_profile(
    session: AsyncSession,
    *,
    user_id: str,
    name: str,
    model: str,
    api_base: str | None = None,
    api_key_encrypted: str | None = None,
    key_source: str | None = None,
    extra: dict[str, Any] | None = None,
    extra_headers_encrypted: str | None = None,
) -> LlmProfile:
    row = LlmProfile(
        user_id=user_id,
        name=name,
        model=model,
        api_base=api_base,
        api_key_encrypted=api_key_encrypted,
        key_source=key_source,
        extra=dict(extra or {}),
        extra_headers_encrypted=extra_headers_encrypted,
    )
    session.add(row)
    await session.flush()
    return row


async def update_profile(
    session: AsyncSession,
    *,
    user_id: str,
    profile_id: str,
    name: str = UNSET,
    model: str = UNSET,
    api_base: str | None = UNSET,
    api_key_encrypted: str | None = UNSET,
    key_source: str | None = UNSET,
    extra: dict[str, Any] = UNSET,
    extra_headers_encrypted: str | None = UNSET,
) -> LlmProfile | None:
    """Change the given fields (others stay); None when the user has no such profile."""
    row = await get_profile(session, user_id=user_id, profile_id=profile_id)
    if row is None:
        return None
    changes = {
        "name": name,
        "model": model,
        "api_base": api_base,
        "api_key_encrypted": api_key_encrypted,
        "key_source": key_source,
        "extra_headers_encrypted": extra_headers_encrypted,
    }
    for field, value in changes.items():
        if value is not UNSET:
            setattr(row, field, value)
    if extra is not UNSET:
        row.extra = dict(extra)
    row.updated_at = utcnow()
    await session.flush()
    return row


async def delete_profile(session: AsyncSession, *, user_id: str, profile_id: str) -> bool:
    """Delete the profile and its role bindings."""
    await session.execute(
        delete(RoleBinding).where(col(RoleBinding.user_id) == user_id, col(RoleBinding.profile_id) == profile_id)
    )
    result: Any = await session.execute(
        delete(LlmProfile).where(col(LlmProfile.id) == profile_id, col(LlmProfile.user_id) == user_id)
    )
    return bool(result.rowcount)


async def list_bindings(session: AsyncSession, *, user_id: str) -> list[RoleBinding]:
    result = await session.execute(_BINDINGS, {"user_id": user_id})
    return list(result.scalars())


async def set_binding(
    session: AsyncSession, *, user_id: str, role: str, profile_id: str, model_override: str | None = None
) -> RoleBinding:
    """Bind `role` to one of the user's profiles (replacing any earlier binding of that role)."""
    result = await session.execute(
        select(RoleBinding).where(col(RoleBinding.user_id) == user_id, col(RoleBinding.role) == role)
    )
    row = result.scalar_one_or_none()
    if row is None:
        row = RoleBinding(user_id=user_id, role=role, profile_id=profile_id, model_override=model_override)
        session.add(row)
    else:
        row.profile_id = profile_id
        row.model_override = model_override
        row.updated_at = utcnow()
    await session.flush()
    return row


async def clear_binding(session: AsyncSession, *, user_id: str, role: str) -> bool:
    """Remove the role's binding (it falls back to the environment / its fallback role)."""
    result: Any = await session.execute(
        delete(RoleBinding).where(col(RoleBinding.user_id) == user_id, col(RoleBinding.role) == role)
    )
    return bool(result.rowcount)
