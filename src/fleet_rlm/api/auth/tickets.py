"""WebSocket tickets: browsers cannot set headers on a WebSocket, and a JWT in a URL leaks into logs.

So an authenticated client first POSTs /api/v1/auth/ws-ticket and connects with `?ticket=<token>`. The token
is random, single-use and short-lived (<= 60 s); only its SHA-256 is stored, in the database, so any worker or
replica can accept it.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from fleet_rlm.api.auth.tokens import unauthorized
from fleet_rlm.store import Database, utcnow
from fleet_rlm.store.models import User
from fleet_rlm.store.repos import tickets, users

MAX_TTL_S = 60
PURGE_AFTER = timedelta(hours=1)


def hash_ticket(ticket: str) -> str:
    return hashlib.sha256(ticket.encode("utf-8")).hexdigest()


async def issue_ticket(db: Database, *, user_id: str, ttl_s: int = MAX_TTL_S) -> tuple[str, datetime]:
    """A fresh ticket for `user_id` and when it expires; `ttl_s` is clamped to 1..60 seconds.

    Tickets that expired over an hour ago are deleted on the way, so the table stays small without a job.
    """
    ttl = max(1, min(int(ttl_s), MAX_TTL_S))
    ticket = secrets.token_urlsafe(32)
    expires_at = utcnow() + timedelta(seconds=ttl)
    async with db.transaction() as s:
        await tickets.purge_tickets(s, before=utcnow() - PURGE_AFTER)
        await tickets.create_ticket(s, token_hash=hash_ticket(ticket), user_id=user_id, expires_at=expires_at)
    return ticket, expires_at


async def consume_ticket(db: Database, ticket: str, *, now: datetime | None = None) -> User:
    """The user a ticket was issued to, burning the ticket; 401 `unauthorized` if unknown, used or expired."""
    if not ticket or len(ticket) > 256:
        raise unauthorized("a WebSocket ticket is required")
    async with db.transaction() as s:
        user_id = await tickets.consume_ticket(s, token_hash=hash_ticket(ticket), now=now)
        user = None if user_id is None else await users.get_user(s, user_id=user_id)
    if user is None:
        raise unauthorized("the WebSocket ticket is unknown, expired or already used")
    return user
