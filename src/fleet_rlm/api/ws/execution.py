"""`/api/v1/ws/execution`: start turns, cancel runs and run commands over one socket; events stream back.

Every turn started here is followed by its own task, so one socket can watch several runs; closing the socket
stops the following, never the runs (they continue and can be resumed with the events socket).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from fleet_rlm.api.json_text import send_json_text
from fleet_rlm.api.routes.turns import caller_of
from fleet_rlm.api.ws.auth import accept_authenticated
from fleet_rlm.api.ws.frames import CancelFrame, CommandFrame, FrameError, error_frame, parse_frame
from fleet_rlm.errors import FleetError
from fleet_rlm.services.live.follow import follow_run
from fleet_rlm.services.turns.inputs import MessageFrame
from fleet_rlm.services.turns.service import TurnService

router = APIRouter()


class ExecutionSocket:
    def __init__(self, websocket: WebSocket, user: Any) -> None:
        self.websocket = websocket
        self.user = user
        self.service: TurnService = websocket.app.state.turns
        self.send_lock = asyncio.Lock()
        self.followers: set[asyncio.Task[None]] = set()

    async def send(self, frame: dict[str, Any]) -> None:
        async with self.send_lock:
            await send_json_text(self.websocket, frame)

    async def serve(self) -> None:
        try:
            while True:
                message = await self.websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                if text is None:  # a binary frame: answer it like any bad frame, keep the socket
                    await self.send(error_frame("invalid_frame", "frames must be JSON text, not binary"))
                    continue
                await self.handle(text)
        except WebSocketDisconnect:
            pass
        finally:
            for task in self.followers:
                task.cancel()
            for task in list(self.followers):
                with contextlib.suppress(BaseException):
                    await task

    async def handle(self, text: str) -> None:
        try:
            frame = parse_frame(text)
            if isinstance(frame, MessageFrame):
                await self.start_turn(frame)
            elif isinstance(frame, CancelFrame):
                run = await self.service.cancel(user_id=self.user.user_id, run_id=frame.run_id)
                await self.send({"type": "cancel_requested", "run_id": run.id, "status": run.status})
            elif isinstance(frame, CommandFrame):
                await self.command(frame)
        except FrameError as exc:
            await self.send(error_frame(exc.code, exc.message))
        except FleetError as exc:
            await self.send(error_frame(exc.code, exc.message, **({"action": exc.action} if exc.action else {})))

    async def start_turn(self, frame: MessageFrame) -> None:
        run = await self.service.start(
            caller_of(self.user),
            session_id=frame.session_id,
            data=frame.turn_input(),
            idempotency_key=frame.idempotency_key,
        )
        await self.send({"type": "ack", "run_id": run.id, "session_id": run.session_id})
        task = asyncio.get_running_loop().create_task(self.forward(run.id, run.session_id))
        self.followers.add(task)
        task.add_done_callback(self.followers.discard)

    async def forward(self, run_id: str, session_id: str) -> None:
        events = follow_run(self.service.database, self.service.bus, run_id=run_id, session_id=session_id)
        async for event in events:
            await self.send({"type": "event", "data": event})

    async def command(self, frame: CommandFrame) -> None:
        if frame.command == "ping":
            await self.send({"type": "result", "command": "ping", "data": {"pong": True}})
        elif frame.command == "active_runs":
            active = sorted(run_id for run_id in self.service.tokens)
            await self.send({"type": "result", "command": "active_runs", "data": {"run_ids": active}})
        else:
            raise FrameError("unknown_command", f"unknown command {frame.command!r}; try ping or active_runs")


@router.websocket("/api/v1/ws/execution")
async def execution_socket(websocket: WebSocket) -> None:
    user = await accept_authenticated(websocket)
    if user is None:
        return
    await ExecutionSocket(websocket, user).serve()
