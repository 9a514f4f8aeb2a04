"""The Starlette app: control-plane routes under /api, toolbox routes under /toolbox/{sandbox_id}.

Every request must carry `Authorization: Bearer <api_key>` (the SDK sends it to both planes, WebSockets
included); a wrong key gets the API's 401 JSON. Every request is recorded in `state.calls`. The SDK's optional
Socket.IO event stream (/api/socket.io) is not offered, so the SDK falls back to polling, which it supports.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import routes_files, routes_git, routes_interpreter, routes_process, routes_resources, routes_sandbox
from .errors import FakeDaytonaError, error_response
from .state import FakeState, RecordedCall

MAX_RECORDED_BODY = 64 * 1024


class AuthAndRecord:
    """ASGI middleware: bearer-key check and call recording (method, path, query, JSON body, status)."""

    def __init__(self, app: ASGIApp, state: FakeState, api_key: str) -> None:
        self.app = app
        self.state = state
        self.expected = f"Bearer {api_key}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if "/socket.io" in scope["path"]:
            await self._reject(scope, receive, send, FakeDaytonaError(404, "event stream not supported"))
            return
        call = RecordedCall(scope.get("method", "WEBSOCKET"), scope["path"], scope["query_string"].decode())
        self.state.calls.append(call)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if headers.get("authorization") != self.expected:
            call.status = 401
            error = FakeDaytonaError(401, "Invalid credentials: check the API key", "UNAUTHORIZED")
            await self._reject(scope, receive, send, error)
            return
        is_json = "json" in headers.get("content-type", "")
        chunks: list[bytes] = []

        async def recording_receive() -> Message:
            message = await receive()
            if is_json and message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body") and sum(map(len, chunks)) <= MAX_RECORDED_BODY:
                    try:
                        call.body = json.loads(b"".join(chunks) or b"null")
                    except json.JSONDecodeError:
                        call.body = b"".join(chunks).decode("utf-8", "replace")
            return message

        async def recording_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                call.status = message["status"]
            elif message["type"] == "websocket.accept":
                call.status = 101
            await send(message)

        await self.app(scope, recording_receive, recording_send)

    @staticmethod
    async def _reject(scope: Scope, receive: Receive, send: Send, error: FakeDaytonaError) -> None:
        if scope["type"] == "http":
            await error_response(error)(scope, receive, send)
        else:
            await send({"type": "websocket.close", "code": 1008, "reason": error.message})


async def _fake_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, FakeDaytonaError)
    return error_response(exc)


async def _http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error_response(FakeDaytonaError(exc.status_code, str(exc.detail)))


def create_app(state: FakeState, api_key: str) -> ASGIApp:
    api_routes: list[Any] = [*routes_sandbox.routes, *routes_resources.routes]
    toolbox_routes: list[Any] = [
        *routes_process.routes,
        *routes_interpreter.routes,
        *routes_files.routes,
        *routes_git.routes,
    ]
    app = Starlette(
        routes=[Mount("/api", routes=api_routes), Mount("/toolbox", routes=toolbox_routes)],
        exception_handlers={FakeDaytonaError: _fake_error, HTTPException: _http_error},
    )
    app.state.fake = state
    return AuthAndRecord(app, state, api_key)


__all__ = ["JSONResponse", "create_app"]
