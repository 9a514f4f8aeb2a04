"""The CLI's local server process (`python -m fleet_rlm.cli.local_serve`), started by `local_server.py`.

The real app behind a gate: every HTTP and WebSocket request must carry the random per-server token from the
0600 discovery file (`X-Fleet-Local-Token`), or it gets 401 — auth mode `none` is only safe when nothing but the
owning user can connect, and loopback alone does not exclude other users or a browser page. The gate also
counts requests, so the server stops itself once it has had no request, no running turn and no attached CLI
(a chat left open keeps it) for `local_server_idle_s`; it answers `/_local/identity` (pid and settings
fingerprint) and `/_local/shutdown`.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hmac
import json
import os
import secrets
import sys
import time
from typing import Any

from fleet_rlm.cli.local_server import (
    IDENTITY_PATH,
    SHUTDOWN_PATH,
    TOKEN_HEADER,
    attach_path,
    data_dir_ready,
    dir_lock,
    remove_discovery,
    write_discovery,
)
from fleet_rlm.cli.server_stamp import fingerprint
from fleet_rlm.config import ConfigError, Settings, load_settings
from fleet_rlm.errors import FleetError

Scope = dict[str, Any]


class LocalGate:
    """ASGI middleware: token check, request accounting, and the two `/_local/` endpoints."""

    def __init__(self, app: Any, token: str, ident: dict[str, Any]) -> None:
        self.app = app
        self.token = token.encode()
        self.ident = ident
        self.inflight = 0
        self.last_activity = time.monotonic()
        self.shutdown_requested = asyncio.Event()

    def _authorized(self, scope: Scope) -> bool:
        wanted = TOKEN_HEADER.lower().encode()
        for name, value in scope.get("headers") or []:
            if name == wanted:
                return hmac.compare_digest(value, self.token)
        return False

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if not self._authorized(scope):
            await _refuse(scope, send)
            return
        self.inflight += 1
        self.last_activity = time.monotonic()
        try:
            if scope["type"] == "http" and scope["path"] == IDENTITY_PATH:
                await _json(send, 200, self.ident)
            elif scope["type"] == "http" and scope["path"] == SHUTDOWN_PATH and scope["method"] == "POST":
                self.shutdown_requested.set()
                await _json(send, 202, {"stopping": True})
            else:
                await self.app(scope, receive, send)
        finally:
            self.inflight -= 1
            self.last_activity = time.monotonic()


async def _json(send: Any, status: int, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


async def _refuse(scope: Scope, send: Any) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 4401})
        return
    error = {
        "code": "local_token_required",
        "message": "this local server only serves the CLI of the user who started it",
        "action": f"send the token from the data dir's discovery file in {TOKEN_HEADER}",
    }
    await _json(send, 401, {"error": error})


def _emit(message: dict[str, Any]) -> None:
    """The one line the starting CLI waits for; afterwards stdout goes to the log like stderr."""
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
    os.dup2(2, 1)


def _busy(app: Any) -> bool:
    turns = getattr(app.state, "turns", None)
    return bool(getattr(turns, "tasks", None))


async def _watch(server: Any, gate: LocalGate, app: Any, settings: Settings, attach_fd: int) -> None:
    """Stop on request, or once idle: remove the discovery file under the lock first, so no CLI picks us up."""
    idle = settings.local_server_idle_s
    interval = min(max(idle / 4, 0.05), 5.0)
    while not server.should_exit:
        try:
            await asyncio.wait_for(gate.shutdown_requested.wait(), timeout=interval)
        except TimeoutError:
            pass
        if gate.shutdown_requested.is_set():
            break
        if gate.inflight or _busy(app):
            gate.last_activity = time.monotonic()
            continue
        if time.monotonic() - gate.last_activity < idle:
            continue
        try:
            with dir_lock(settings.data_dir, blocking=False) as locked:
                if locked and _alone(attach_fd):  # no CLI attached, and none can attach from now on
                    remove_discovery(settings.data_dir, pid=os.getpid())
                    break
        except OSError as exc:  # the data dir is gone (deleted under us): no CLI can find this server any more
            print(f"local server stopping: its data dir cannot be locked ({exc})", file=sys.stderr, flush=True)
            break
    with contextlib.suppress(OSError):
        remove_discovery(settings.data_dir, pid=os.getpid())
    server.should_exit = True


def _alone(attach_fd: int) -> bool:
    try:
        fcntl.flock(attach_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held until the process exits
    except OSError:
        return False
    return True


async def _serve(settings: Settings) -> int:
    import uvicorn

    from fleet_rlm.api.app import create_app

    token = secrets.token_urlsafe(32)
    update: dict[str, Any] = {"host": "127.0.0.1"}
    if settings.turn_processes is None:  # one user's CLI: turns in threads, no workers to fork at the first call
        update["turn_processes"] = 0
    app = create_app(settings.model_copy(update=update))
    gate = LocalGate(app, token, {"pid": os.getpid(), "fingerprint": fingerprint(settings)})
    config = uvicorn.Config(
        gate,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="on",
        access_log=False,
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            _emit({"error": {"code": "local_server_failed", "message": "the local server did not start"}})
            return 1
        await asyncio.sleep(0.02)
    port = next(int(sock.getsockname()[1]) for srv in server.servers for sock in srv.sockets)
    attach_file = attach_path(settings.data_dir, os.getpid())
    attach_fd = os.open(attach_file, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    ready = {"port": port, "pid": os.getpid(), "token": token}
    write_discovery(settings.data_dir, {**ready, "started_at": time.time()})
    _emit({"ready": ready})
    print(f"local server pid {os.getpid()} ready on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    gate.last_activity = time.monotonic()  # idle time counts from ready, not from the (slow) app startup
    watcher = asyncio.create_task(_watch(server, gate, app, settings, attach_fd))
    try:
        await serving
    finally:
        watcher.cancel()
        remove_discovery(settings.data_dir, pid=os.getpid())
        attach_file.unlink(missing_ok=True)
        os.close(attach_fd)
    return 0


def _prepare(settings: Settings) -> None:
    """The predictable startup failures (data dir, database) as one structured error for the waiting CLI."""
    from fleet_rlm.services.startup import prepare_data_dir, prepare_database

    prepare_data_dir(settings)

    async def _database() -> None:
        database = await prepare_database(settings)
        await database.dispose()

    asyncio.run(_database())


def main() -> int:
    from fleet_rlm.api import startup_gc

    startup_gc.pause()  # until the app's lifespan has started (see startup_gc)
    try:
        return _start()
    finally:
        startup_gc.resume()


def _start() -> int:
    import fleet_rlm.api.app  # noqa: F401 - first: it orders its own imports (dspy before the web stack)

    try:
        settings = load_settings()
        data_dir_ready(settings.data_dir)
        _prepare(settings)
    except FleetError as exc:
        _emit({"error": exc.to_dict()})
        return 1
    except ConfigError as exc:
        _emit({"error": {"code": "config_invalid", "message": str(exc)}})
        return 1
    return asyncio.run(_serve(settings))


if __name__ == "__main__":
    raise SystemExit(main())
