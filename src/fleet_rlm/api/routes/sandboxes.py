"""The caller's live sandboxes: list, inspect, and end one (its REPL state is lost; the next turn starts fresh)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request, Response

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.api.deps import DatabaseDep, ReadDep, SettingsDep, live_pool
from fleet_rlm.errors import Conflict, NotFound
from fleet_rlm.schemas.common import Responses
from fleet_rlm.schemas.runtime import SandboxList, SandboxOut
from fleet_rlm.services.sandbox_leases import user_sandboxes

router = APIRouter(prefix="/api/v1/sandboxes", tags=["sandboxes"])
NOT_FOUND: Responses = {404: {"description": "No live sandbox with this id for this user."}}


def sandbox_not_found(sandbox_id: str) -> NotFound:
    return NotFound(
        f"no live sandbox {sandbox_id}",
        code="sandbox_not_found",
        action="list live sandboxes with GET /api/v1/sandboxes (idle ones are released after a while)",
    )


async def _find(request: Request, database: DatabaseDep, user_id: str, backend: str, sandbox_id: str) -> SandboxOut:
    async with database.session() as s:
        items = await user_sandboxes(live_pool(request), s, user_id=user_id, backend=backend)
    found = next((item for item in items if item.id == sandbox_id), None)
    if found is None:
        raise sandbox_not_found(sandbox_id)
    return found


@router.get("", operation_id="listSandboxes", response_model=SandboxList)
async def list_sandboxes(request: Request, user: CurrentUserDep, s: ReadDep, settings: SettingsDep) -> SandboxList:
    """Your sessions' warm REPLs, most recently used first."""
    items = await user_sandboxes(live_pool(request), s, user_id=user.user_id, backend=settings.sandbox_backend)
    return SandboxList(items=items)


@router.get("/{sandbox_id}", operation_id="getSandbox", response_model=SandboxOut, responses=NOT_FOUND)
async def get_sandbox(
    sandbox_id: str, request: Request, user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep
) -> SandboxOut:
    return await _find(request, database, user.user_id, settings.sandbox_backend, sandbox_id)


@router.delete(
    "/{sandbox_id}",
    operation_id="deleteSandbox",
    status_code=204,
    responses={**NOT_FOUND, 409: {"description": "A turn is using the sandbox."}},
)
async def delete_sandbox(
    sandbox_id: str, request: Request, user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep
) -> Response:
    """End the session's sandbox: its Python state is lost and its next turn starts a fresh one (workspace
    files stay)."""
    found = await _find(request, database, user.user_id, settings.sandbox_backend, sandbox_id)
    if found.busy:
        raise Conflict(
            "a turn is using this sandbox",
            code="sandbox_busy",
        )
    pool = live_pool(request)
    assert pool is not None
    await asyncio.to_thread(pool.end_session, found.session_id)
    return Response(status_code=204)
