"""`/api/v1/ws/execution/events?run_id=|session_id=&after=SEQ`: replay from `after`, then live, gap-free."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from fleet_rlm.api.json_text import send_json_text
from fleet_rlm.api.ws.auth import accept_authenticated
from fleet_rlm.api.ws.frames import error_frame
from fleet_rlm.services.live.follow import follow_run, follow_session
from fleet_rlm.services.turns.service import TurnService
from fleet_rlm.store.repos import runs as runs_repo
from fleet_rlm.store.repos import sessions as sessions_repo

router = APIRouter()


@router.websocket("/api/v1/ws/execution/events")
async def events_socket(websocket: WebSocket) -> None:
    user = await accept_authenticated(websocket)
    if user is None:
        return
    service: TurnService = websocket.app.state.turns
    params = websocket.query_params
    run_id, session_id, after_text = params.get("run_id"), params.get("session_id"), params.get("after", "0")
    if not after_text.isdigit() or bool(run_id) == bool(session_id):
        await send_json_text(
            websocket,
            error_frame("invalid_query", "give exactly one of run_id or session_id, and after as a whole number"),
        )
        await websocket.close(code=1008)
        return
    after = int(after_text)
    events: Any
    async with service.database.session() as session:
        if run_id:
            run = await runs_repo.get_run(session, run_id=run_id, user_id=user.user_id)
            found = run is not None
            if run is not None:
                events = follow_run(
                    service.database, service.bus, run_id=run.id, session_id=run.session_id, after=after
                )
        else:
            chat = await sessions_repo.get_session(session, user_id=user.user_id, session_id=str(session_id))
            found = chat is not None
            if chat is not None:
                events = follow_session(service.database, service.bus, session_id=chat.id, after=after)
    if not found:
        await send_json_text(websocket, error_frame("not_found", "no such run or session"))
        await websocket.close(code=1008)
        return
    last_seq = after
    try:
        async for event in events:
            last_seq = int(event["seq"])
            await send_json_text(websocket, {"type": "event", "data": event})
        await send_json_text(websocket, {"type": "end", "last_seq": last_seq})
        await websocket.close()
    except WebSocketDisconnect:
        pass
