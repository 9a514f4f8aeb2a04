"""One-time WebSocket tickets: only the SHA-256 of the token is stored, consumption is one conditional UPDATE.

The UPDATE (`used_at IS NULL AND expires_at > now`) makes a ticket single-use across workers and replicas: two
connections racing with the same ticket cannot both win.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from fleet_rlm.store.models import WsTicket
from fleet_rlm.store.types import utcnow


async def create_ticket(session: AsyncSession, *, token_hash: str, user_id: str, expires_at: datetime) -> WsTicket:
    row = WsTicket(id=token_hash, user_id=user_id, expires_at=expires_at)
    session.add(row)
    await session.flush()
    return row


async def consume_ticket(session: AsyncSession, *, token_hash: str, now: datetime | None = None) -> str | None:
    """Mark the ticket used and return its user id; None if unknown, expired or already used."""
    moment = now or utcnow()
    result = await session.execute(
        update(WsTicket)
        .where(
            col(WsTicket.id) == token_hash,
            col(WsTicket.used_at).is_(None),
            col(WsTicket.expires_at) > moment,
        )
        .values(used_at=moment)
        .returning(col(WsTicket.user_id))
        .execution_options(synchronize_session=False)
    )
    user_id = result.scalar_one_or_none()
    return None if user_id is None else str(user_id)


async def purge_tickets(session: AsyncSession, *, before: datetime) -> int:
    """Delete tickets that expired before `before` (used or not); returns how many went."""
    result: Any = await session.execute(delete(WsTicket).where(col(WsTicket.expires_at) < before))
    return int(result.rowcount or 0)
