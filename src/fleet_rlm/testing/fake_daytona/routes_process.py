"""Toolbox process routes: one-shot execute / code-run and the session API (commands, logs, stdin).

Log following uses a WebSocket on the logs URL (`?follow=true`), as the SDK's
`get_session_command_logs_async` does: binary messages carrying the prefixed log, then a normal close (1000)
once the command has exited and its output is drained.
"""

from __future__ import annotations

import asyncio
import uuid

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from .errors import FakeDaytonaError, daemon_error
from .fsmap import HOME
from .routes_sandbox import fake_state, json_body
from .sessions import SessionCommand, ShellSession
from .state import FakeState


async def _run(
    state: FakeState,
    sandbox_id: str,
    argv: list[str],
    cwd: str,
    env: dict[str, str] | None,
    timeout: float | None,
) -> tuple[int, str]:
    runtime = state.runtime(sandbox_id)
    host_argv, host_cwd = runtime.fs.command(argv, cwd)
    proc = await asyncio.create_subprocess_exec(
        *host_argv,
        cwd=host_cwd,
        env=state.environment(sandbox_id, env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError as exc:
        proc.kill()
        await proc.wait()
        raise daemon_error(408, f"command timed out after {timeout}s", "PROCESS_EXECUTION_TIMEOUT") from exc
    return proc.returncode or 0, output.decode("utf-8", "replace")


async def execute(request: Request) -> Response:
    state, sid = fake_state(request), request.path_params["sid"]
    body = await json_body(request)
    command = state.runtime(sid).fs.rewrite(str(body.get("command", "")))
    code, output = await _run(
        state, sid, ["bash", "-c", command], body.get("cwd") or HOME, body.get("envs"), body.get("timeout")
    )
    return JSONResponse({"exitCode": code, "result": output})


async def code_run(request: Request) -> Response:
    state, sid = fake_state(request), request.path_params["sid"]
    body = await json_body(request)
    if body.get("language", "python") != "python":
        raise daemon_error(400, f"unsupported language: {body.get('language')}")
    argv = ["python3", "-c", str(body.get("code", "")), *(body.get("argv") or [])]
    code, output = await _run(state, sid, argv, HOME, body.get("envs"), body.get("timeout"))
    return JSONResponse({"exitCode": code, "result": output, "artifacts": {"charts": []}})


def _session(request: HTTPConnection) -> ShellSession:
    runtime = fake_state(request).runtime(request.path_params["sid"])
    session = runtime.sessions.get(request.path_params["session"])
    if session is None:
        raise daemon_error(404, "session not found", "PROCESS_NOT_FOUND")
    return session


def _command(request: HTTPConnection) -> tuple[ShellSession, SessionCommand]:
    session = _session(request)
    command = session.commands.get(request.path_params["cmd"])
    if command is None:
        raise daemon_error(404, "command not found", "PROCESS_NOT_FOUND")
    return session, command


async def create_session(request: Request) -> Response:
    body = await json_body(request)
    if not body.get("sessionId"):
        raise daemon_error(400, "sessionId is required")
    fake_state(request).new_session(request.path_params["sid"], str(body["sessionId"]))
    return Response(status_code=201)


async def list_sessions(request: Request) -> Response:
    runtime = fake_state(request).runtime(request.path_params["sid"])
    return JSONResponse([s.to_dto() for s in runtime.sessions.values()])


async def get_session(request: Request) -> Response:
    return JSONResponse(_session(request).to_dto())


async def delete_session(request: Request) -> Response:
    session = _session(request)
    session.close()
    del fake_state(request).runtime(request.path_params["sid"]).sessions[session.id]
    return Response(status_code=204)


async def session_execute(request: Request) -> Response:
    session = _session(request)
    body = await json_body(request)
    if not body.get("command"):
        raise daemon_error(400, "command is required")
    run_async = bool(body.get("runAsync") or body.get("async"))
    command = session.execute(str(uuid.uuid4()), str(body["command"]), bool(body.get("suppressInputEcho")))
    if run_async:
        return JSONResponse({"cmdId": command.id})
    await command.done.wait()
    return JSONResponse(
        {
            "cmdId": command.id,
            "output": command.log.combined(),
            "stdout": command.log.stdout.decode("utf-8", "replace"),
            "stderr": command.log.stderr.decode("utf-8", "replace"),
            "exitCode": command.exit_code,
        }
    )


async def get_command(request: Request) -> Response:
    return JSONResponse(_command(request)[1].to_dto())


async def command_logs(request: Request) -> Response:
    log = _command(request)[1].log
    body = {
        "output": log.combined(),
        "stdout": log.stdout.decode("utf-8", "replace"),
        "stderr": log.stderr.decode("utf-8", "replace"),
    }
    return JSONResponse(body)


async def command_logs_ws(websocket: WebSocket) -> None:
    try:
        _, command = _command(websocket)
    except FakeDaytonaError as exc:
        await websocket.close(code=1008, reason=exc.message)
        return
    await websocket.accept()
    snapshot, queue = command.log.subscribe()
    follow = websocket.query_params.get("follow") == "true"
    try:
        if snapshot:
            await websocket.send_bytes(snapshot)
        while follow and (chunk := await queue.get()) is not None:
            await websocket.send_bytes(chunk)
        await websocket.close(code=1000)
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        command.log.unsubscribe(queue)


async def send_input(request: Request) -> Response:
    session, command = _command(request)
    body = await json_body(request)
    await session.send_input(command, str(body.get("data", "")))
    return Response(status_code=204)


P = "/{sid}/process"
routes = [
    Route(f"{P}/execute", execute, methods=["POST"]),
    Route(f"{P}/code-run", code_run, methods=["POST"]),
    Route(f"{P}/session", create_session, methods=["POST"]),
    Route(f"{P}/session", list_sessions, methods=["GET"]),
    Route(f"{P}/session/{{session}}", get_session, methods=["GET"]),
    Route(f"{P}/session/{{session}}", delete_session, methods=["DELETE"]),
    Route(f"{P}/session/{{session}}/exec", session_execute, methods=["POST"]),
    Route(f"{P}/session/{{session}}/command/{{cmd}}", get_command, methods=["GET"]),
    Route(f"{P}/session/{{session}}/command/{{cmd}}/input", send_input, methods=["POST"]),
    WebSocketRoute(f"{P}/session/{{session}}/command/{{cmd}}/logs", command_logs_ws),
    Route(f"{P}/session/{{session}}/command/{{cmd}}/logs", command_logs, methods=["GET"]),
]
