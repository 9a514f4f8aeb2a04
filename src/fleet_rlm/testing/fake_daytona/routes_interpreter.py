"""Toolbox code-interpreter routes: contexts (create/list/delete) and the execute WebSocket.

Protocol (as the SDK's `code_interpreter.run_code` speaks it): the client sends one JSON text message
{"code", "contextId"?, "envs"?, "timeout"?}; the server streams JSON text messages of type stdout/stderr/error
and closes with 1000 when the cell finishes, or 4008 when it timed out. Without a contextId the sandbox's
"default" context is used.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from .errors import FakeDaytonaError, daemon_error
from .fsmap import HOME, normalize_guest
from .interpreter import InterpreterContext
from .routes_sandbox import fake_state, json_body
from .state import FakeState

DEFAULT_TIMEOUT_S = 600
TIMEOUT_CLOSE_CODE = 4008


def _context(state: FakeState, sandbox_id: str, context_id: str | None) -> InterpreterContext:
    runtime = state.runtime(sandbox_id)
    key = context_id or "default"
    context = runtime.contexts.get(key)
    if context is None and key == "default":
        env = state.environment(sandbox_id)
        context = InterpreterContext(runtime.fs, env, HOME, asyncio.get_running_loop(), "default")
        runtime.contexts[key] = context
    if context is None:
        raise daemon_error(404, f"context not found: {key}", "PROCESS_NOT_FOUND")
    return context


async def create_context(request: Request) -> Response:
    state, sid = fake_state(request), request.path_params["sid"]
    body = await json_body(request)
    if body.get("language") not in (None, "python"):
        raise daemon_error(400, f"unsupported language: {body['language']} (only 'python' is supported)")
    runtime = state.runtime(sid)
    cwd = normalize_guest(body.get("cwd") or HOME)
    context = InterpreterContext(runtime.fs, state.environment(sid), cwd, asyncio.get_running_loop())
    runtime.contexts[context.id] = context
    return JSONResponse(context.to_dto())


async def list_contexts(request: Request) -> Response:
    runtime = fake_state(request).runtime(request.path_params["sid"])
    contexts = [c.to_dto() for key, c in runtime.contexts.items() if key != "default"]
    return JSONResponse({"contexts": contexts})


async def delete_context(request: Request) -> Response:
    runtime = fake_state(request).runtime(request.path_params["sid"])
    context_id = request.path_params["id"]
    if context_id == "default":
        raise daemon_error(400, "cannot delete default context")
    context = runtime.contexts.pop(context_id, None)
    if context is None:
        raise daemon_error(404, f"context not found: {context_id}", "PROCESS_NOT_FOUND")
    context.close()
    return JSONResponse({"message": "Context deleted successfully"})


async def execute_ws(websocket: WebSocket) -> None:
    await websocket.accept()
    try:
        request: dict[str, Any] = json.loads(await websocket.receive_text())
    except (json.JSONDecodeError, WebSocketDisconnect):
        await websocket.close(code=1002, reason="invalid JSON payload")
        return
    if not request.get("code"):
        await websocket.close(code=1008, reason="code is required")
        return
    try:
        context = _context(fake_state(websocket), websocket.path_params["sid"], request.get("contextId"))
    except FakeDaytonaError as exc:
        await websocket.close(code=1008, reason=exc.message)
        return
    if not context.active:
        await websocket.close(code=1008, reason="context is not active")
        return
    timeout = request.get("timeout")
    timeout_s = DEFAULT_TIMEOUT_S if timeout is None else (float(timeout) or None)

    async def emit(message: dict[str, Any]) -> None:
        await websocket.send_text(json.dumps(message))

    try:
        finished = await context.run(request["code"], request.get("envs"), timeout_s, emit)
        if finished:
            await websocket.close(code=1000)
        else:
            await websocket.close(code=TIMEOUT_CLOSE_CODE, reason="execution timed out")
    except (WebSocketDisconnect, RuntimeError):
        pass


P = "/{sid}/process/interpreter"
routes = [
    Route(f"{P}/context", create_context, methods=["POST"]),
    Route(f"{P}/context", list_contexts, methods=["GET"]),
    Route(f"{P}/context/{{id}}", delete_context, methods=["DELETE"]),
    WebSocketRoute(f"{P}/execute", execute_ws),
]
