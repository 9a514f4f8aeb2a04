"""Attachments (staged inputs), always scoped by the owning user: another user's id behaves as "not found".

The bytes live on disk (the API decides where and records `storage_path`); rows only describe them.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import ATTACHMENT_KINDS, Attachment
from fleet_rlm.store.repos._sql import Page
from fleet_rlm.store.types import new_id

MAX_PAGE = 200


async def create_attachment(
    session: AsyncSession,
    *,
    user_id: str,
    kind: str,
    name: str,
    size: int,
    sha256: str,
    storage_path: str,
    attachment_id: str | None = None,
    session_id: str | None = None,
    media_type: str | None = None,
    text_path: str | None = None,
    source_url: str | None = None,
) -> Attachment:
    """Insert the row; `attachment_id` lets the caller name the file before the row exists."""
    if kind not in ATTACHMENT_KINDS:
        raise ValueError(f"unknown attachment kind {kind!r}; expected one of {', '.join(ATTACHMENT_KINDS)}")
    row = Attachment(
        id=attachment_id or new_id(),
        user_id=user_id,
        session_id=session_id,
        kind=kind,
        name=name,
        media_type=media_type,
        size=size,
        sha256=sha256,
        storage_path=storage_path,
        text_path=text_path,
        source_url=source_url,
    )
    session.add(row)
    await session.flush()
    return row


async def get_attachment(session: AsyncSession, *, user_id: str, attachment_id: str) -> Attachment | None:
    result = await session.execute(
        select(Attachment).where(col(Attachment.id) == attachment_id, col(Attachment.user_id) == user_id)
    )
    return result.scalar_one_or_none()


async def list_attachments(
    session: AsyncSession, *, user_id: str, session_id: str | None = None, limit: int = 50, offset: int = 0
) -> Page[Attachment]:
    """Newest first; with `session_id`, only that session's attachments."""
    limit = max(1, min(limit, MAX_PAGE))
    offset = max(0, offset)
    where: list[Any] = [col(Attachment.user_id) == user_id]
    if session_id is not None:
        where.append(col(Attachment.session_id) == session_id)
    total = (await session.execute(select(func.count()).select_from(Attachment).where(*where))).scalar_one()
    rows = await session.execute(
        select(Attachment)
        .where(*where)
        .order_by(col(Attachment.created_at).desc(), col(Attachment.id).desc())
        .limit(limit)
        .offset(offset)
    )
    return Page(items=list(rows.scalars()), total=total, limit=limit, offset=offset)


async def delete_attachment(session: AsyncSession, *, user_id: str, attachment_id: str) -> Attachment | None:
    """Delete the row and return it (so the caller can remove the file); None if not this user's."""
    row = await get_attachment(session, user_id=user_id, attachment_id=attachment_id)
    if row is None:
        return None
    await session.execute(delete(Attachment).where(col(Attachment.id) == attachment_id))
    await session.flush()
    return row
