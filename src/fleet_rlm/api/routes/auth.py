"""Who am I, and single-use WebSocket tickets."""

from __future__ import annotations

from fastapi import APIRouter

from fleet_rlm.api.auth import CurrentUserDep, issue_ticket
from fleet_rlm.api.deps import DatabaseDep, SettingsDep
from fleet_rlm.schemas.auth import Me, WsTicketOut
from fleet_rlm.store import utcnow

router = APIRouter(prefix="/api/v1/auth", tags=["auth"])


@router.get("/me", operation_id="getMe", response_model=Me)
async def get_me(user: CurrentUserDep, settings: SettingsDep) -> Me:
    """The authenticated user and their default workspace."""
    return Me(
        id=user.user_id,
        name=user.name,
        display_name=user.display_name,
        workspace_id=user.workspace_id,
        auth_mode=settings.auth_mode,
        is_admin=user.is_admin,
    )


@router.post("/ws-ticket", operation_id="createWsTicket", response_model=WsTicketOut, status_code=201)
async def create_ws_ticket(user: CurrentUserDep, database: DatabaseDep) -> WsTicketOut:
    """A single-use ticket (valid 60 s) for `?ticket=` on WebSocket and SSE routes."""
    ticket, expires_at = await issue_ticket(database, user_id=user.user_id)
    expires_in = max(0, int((expires_at - utcnow()).total_seconds()))
    return WsTicketOut(ticket=ticket, expires_at=expires_at, expires_in=expires_in)
