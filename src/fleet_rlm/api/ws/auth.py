"""Authenticate a WebSocket before use; a bad ticket gets an error frame and close code 4401, not a 500."""

from __future__ import annotations

from fastapi import WebSocket

from fleet_rlm.api.auth import Principal, ticket_user
from fleet_rlm.api.json_text import send_json_text
from fleet_rlm.api.ws.frames import error_frame
from fleet_rlm.errors import FleetError

UNAUTHORIZED_CLOSE = 4401


async def accept_authenticated(websocket: WebSocket) -> Principal | None:
    """Accept the socket; return its principal, or send `unauthorized` and close when the ticket is bad."""
    await websocket.accept()
    try:
        return await ticket_user(websocket)
    except FleetError as exc:
        frame = error_frame(exc.code, exc.message, **({"action": exc.action} if exc.action else {}))
        await send_json_text(websocket, frame)
        await websocket.close(code=UNAUTHORIZED_CLOSE)
        return None
