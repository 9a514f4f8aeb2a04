"""The caller's live sandboxes, read from the runtime's pool (one warm worker per session; with turn worker
processes, every worker's pool).

The pool knows sessions, not users: a lease is the caller's when its session is. Without a pool (a runtime
that has none, e.g. a test double) there are simply no live sandboxes (`fleet_rlm.api.deps.live_pool`).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.runtime.contracts import LiveSandboxes
from fleet_rlm.schemas.runtime import SandboxOut
from fleet_rlm.store.repos import sessions as sessions_repo


async def user_sandboxes(
    pool: LiveSandboxes | None, s: AsyncSession, *, user_id: str, backend: str
) -> list[SandboxOut]:
    if pool is None:
        return []
    found: list[SandboxOut] = []
    for lease in await asyncio.to_thread(pool.leases):  # turn workers answer over their pipes
        if await sessions_repo.get_session(s, user_id=user_id, session_id=lease.session_id) is None:
            continue
        found.append(
            SandboxOut(
                id=lease.session_id,
                session_id=lease.session_id,
                workspace_id=lease.workspace_id,
                backend=backend,
                started_at=datetime.fromtimestamp(lease.started_at, UTC),
                last_used_at=datetime.fromtimestamp(lease.last_used_at, UTC),
                busy=lease.busy,
                alive=lease.alive,
            )
        )
    return sorted(found, key=lambda item: item.last_used_at, reverse=True)
