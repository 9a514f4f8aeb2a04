"""Chat sessions, always scoped by the owning user (a foreign session id behaves as "not found")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, delete, func, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import ChatSession
from fleet_rlm.store.repos._sql import UNSET, Page
from fleet_rlm.store.types import utcnow

MAX_PAGE = 200


async def create_session(
    session: AsyncSession,
    *,
    user_id: str,
    title: str = "",
    workspace_id: str | None = None,
    settings: dict[str, Any] | None = None,
    origin: str = "user",
) -> ChatSession:
    row = ChatSession(user_id=user_id, title=title, workspace_id=workspace_id, settings=settings or {}, origin=origin)
    session.add(row)
    await session.flush()
    return row


_OWN_SESSION = select(ChatSession).where(
    col(ChatSession.id) == bindparam("session_id"), col(ChatSession.user_id) == bindparam("user_id")
)  # built once (as the other statements every turn runs): construction was a third of a statement's cost


async def get_session(session: AsyncSession, *, user_id: str, session_id: str) -> ChatSession | None:
    result = await session.execute(_OWN_SESSION, {"session_id": session_id, "user_id": user_id})
    return result.scalar_one_or_none()


async def list_sessions(
    session: AsyncSession,
    *,
    user_id: str,
    search: str | None = None,
    origins: Sequence[str] | None = ("user",),
    limit: int = 50,
    offset: int = 0,
) -> Page[ChatSession]:
    """Most recently updated first; `search` matches the title case-insensitively (as a substring); `origins`
    keeps those origins (default: sessions a person started), None keeps every origin."""
    limit = max(1, min(limit, MAX_PAGE))
    offset = max(0, offset)
    where = [col(ChatSession.user_id) == user_id]
    if origins is not None:
        where.append(col(ChatSession.origin).in_(list(origins)))
    if search:
        where.append(col(ChatSession.title).icontains(search, autoescape=True))
    total = (await session.execute(select(func.count()).select_from(ChatSession).where(*where))).scalar_one()
    rows = await session.execute(
        select(ChatSession)
        .where(*where)
        .order_by(col(ChatSession.updated_at).desc(), col(ChatSession.id).desc())
        .limit(limit)
        .offset(offset)
    )
    return Page(items=list(rows.scalars()), total=total, limit=limit, offset=offset)


async def update_session(
    session: AsyncSession,
    *,
    user_id: str,
    session_id: str,
    title: str = UNSET,
    summary: str | None = UNSET,
    settings: dict[str, Any] = UNSET,
    workspace_id: str | None = UNSET,
    last_run_id: str | None = UNSET,
) -> ChatSession | None:
    """Change the given fields (others stay); None if the session does not exist for this user."""
    row = await get_session(session, user_id=user_id, session_id=session_id)
    if row is None:
        return None
    changes = {
        "title": title,
        "summary": summary,
        "settings": settings,
        "workspace_id": workspace_id,
        "last_run_id": last_run_id,
    }
    for name, value in changes.items():
        if value is not UNSET:
            setattr(row, name, dict(value) if isinstance(value, dict) else value)
    row.updated_at = utcnow()
    await session.flush()
    return row


async def touch_sessions(session: AsyncSession, touches: list[tuple[str, str | None]]) -> None:
    """`touch_session` for (session_id, summary or None) of turns finishing in one transaction: one
    executemany per kind (with or without a new summary)."""
    now = utcnow()
    plain = [{"session_id": session_id, "updated_at": now} for session_id, summary in touches if not summary]
    summarized = [
        {"session_id": session_id, "updated_at": now, "summary": summary} for session_id, summary in touches if summary
    ]
    if plain:
        await session.execute(_TOUCH, plain)
    if summarized:
        await session.execute(_TOUCH_SUMMARY, summarized)


async def touch_session(session: AsyncSession, *, session_id: str, summary: str | None = None) -> bool:
    """Move a session to the top of the list (a turn ended), with the turn's new `summary` if given; one UPDATE
    (it runs in the writer's shared transaction for every finishing turn). False if there is no such session."""
    params: dict[str, Any] = {"session_id": session_id, "updated_at": utcnow()}
    if summary:
        params["summary"] = summary
    result: Any = await session.execute(_TOUCH_SUMMARY if summary else _TOUCH, params)
    return bool(result.rowcount)


_SESSIONS: Any = ChatSession.__table__  # type: ignore[attr-defined]
_TOUCH = update(_SESSIONS).where(_SESSIONS.c.id == bindparam("session_id")).values(updated_at=bindparam("updated_at"))
_TOUCH_SUMMARY = _TOUCH.values(summary=bindparam("summary"))


async def delete_session(session: AsyncSession, *, user_id: str, session_id: str) -> bool:
    """Delete the session and (by cascade) its turns, runs, events and artifacts."""
    result: Any = await session.execute(
        delete(ChatSession).where(col(ChatSession.id) == session_id, col(ChatSession.user_id) == user_id)
    )
    return bool(result.rowcount)
