"""A user's MCP servers. Secret values arrive already encrypted; every function is scoped by `user_id`, so
another user's server is "not found"."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, delete
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import McpServer
from fleet_rlm.store.types import utcnow

MAX_PER_USER = 50
FIELDS = frozenset({"name", "command", "args", "url", "tools", "secrets_encrypted", "timeout_s", "enabled", "extra"})


_OF_USER = select(McpServer).where(col(McpServer.user_id) == bindparam("user_id"))
_ALL = _OF_USER.order_by(col(McpServer.name)).limit(MAX_PER_USER)
_ENABLED = _OF_USER.where(col(McpServer.enabled).is_(True)).order_by(col(McpServer.name)).limit(MAX_PER_USER)


async def list_servers(session: AsyncSession, *, user_id: str, enabled_only: bool = False) -> list[McpServer]:
    query = _ENABLED if enabled_only else _ALL
    result = await session.execute(query, {"user_id": user_id})
    return list(result.scalars())


async def get_server(session: AsyncSession, *, user_id: str, server_id: str) -> McpServer | None:
    result = await session.execute(
        select(McpServer).where(col(McpServer.id) == server_id, col(McpServer.user_id) == user_id)
    )
    return result.scalar_one_or_none()


async def get_server_by_name(session: AsyncSession, *, user_id: str, name: str) -> McpServer | None:
    result = await session.execute(
        select(McpServer).where(col(McpServer.user_id) == user_id, col(McpServer.name) == name)
    )
    return result.scalar_one_or_none()


async def create_server(session: AsyncSession, *, user_id: str, **fields: Any) -> McpServer:
    unknown = set(fields) - FIELDS
    if unknown:
        raise TypeError(f"unknown MCP server fields: {sorted(unknown)}")
    row = McpServer(user_id=user_id, **fields)
    session.add(row)
    await session.flush()
    return row


async def update_server(session: AsyncSession, *, user_id: str, server_id: str, **changes: Any) -> McpServer | None:
    """Set the given fields; None when the user has no such server."""
    unknown = set(changes) - FIELDS
    if unknown:
        raise TypeError(f"unknown MCP server fields: {sorted(unknown)}")
    row = await get_server(session, user_id=user_id, server_id=server_id)
    if row is None:
        return None
    for name, value in changes.items():
        setattr(row, name, value)
    row.updated_at = utcnow()
    session.add(row)
    await session.flush()
    return row


async def delete_server(session: AsyncSession, *, user_id: str, server_id: str) -> bool:
    result = await session.execute(
        delete(McpServer).where(col(McpServer.id) == server_id, col(McpServer.user_id) == user_id)
    )
    return bool(getattr(result, "rowcount", 0))
