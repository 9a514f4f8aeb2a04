"""The server as `serve-api` runs it (fleet_rlm.api.serving): slow-header clients are cut off, normal ones are not;
WebSockets are compressed only when configured.

Real uvicorn with the guarded h11 protocol on a loopback port, raw sockets for the slow clients. Bounded: each
wait ends after a few seconds whatever happens.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect as ws_connect

from fleet_rlm.api.app import create_app
from fleet_rlm.api.serving import FleetServer, uvicorn_config
from fleet_rlm.config import Settings

pytestmark = pytest.mark.db_independent

HEADER_TIMEOUT_S = 0.5
BOUND_S = 10.0  # how long a test waits for the server to act before failing


@contextmanager
def _serving(data_dir: Path, **settings: Any) -> Iterator[int]:
    """A real FleetServer on an ephemeral port (the setting itself requires a real one); yields the port."""
    configured = Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=data_dir, sandbox_pool_size=0, log_level="warning", **settings
    ).model_copy(update={"port": 0})
    server = FleetServer(uvicorn_config(configured, create_app(configured)))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    yield int(server.servers[0].sockets[0].getsockname()[1])
    server.should_exit = True
    thread.join(timeout=30)


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with _serving(tmp_path_factory.mktemp("serving") / "data", http_header_timeout_s=HEADER_TIMEOUT_S) as bound:
        yield bound


def _closed_by_server(sock: socket.socket, trickle: bytes | None) -> bool:
    """Send `trickle` every 0.1 s (never completing the headers) until the server closes the socket."""
    sock.settimeout(0.1)
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline:
        try:
            if trickle:
                sock.sendall(trickle)
            if sock.recv(4096) == b"":
                return True
        except TimeoutError:
            continue
        except OSError:  # reset or broken pipe: closed as well
            return True
    return False


def _get_health(sock: socket.socket) -> bytes:
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    sock.settimeout(BOUND_S)
    reply = b""
    while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
        chunk = sock.recv(4096)
        if not chunk:
            break
        reply += chunk
    return reply


def test_slowloris_request_line_is_cut_off(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\n")
        assert _closed_by_server(sock, b"X-Slow: 1\r\n"), "a client trickling headers kept its socket"


def test_silent_connection_is_cut_off(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        assert _closed_by_server(sock, None), "a client that sends nothing kept its socket"


def test_normal_keep_alive_and_websocket_outlive_the_header_timeout(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        assert _get_health(sock).startswith(b"HTTP/1.1 200")
        time.sleep(HEADER_TIMEOUT_S * 2)  # idle between requests: the keep-alive timeout (5 s) applies, not this one
        assert _get_health(sock).startswith(b"HTTP/1.1 200")
    with ws_connect(f"ws://127.0.0.1:{port}/api/v1/ws/execution", open_timeout=BOUND_S) as ws:
        time.sleep(HEADER_TIMEOUT_S * 2)
        ws.send('{"type": "command", "command": "ping"}')
        assert '"pong": true' in str(ws.recv(timeout=BOUND_S)).replace('"pong":true', '"pong": true')


def test_websockets_are_compressed_only_when_configured(port: int, tmp_path: Path) -> None:
    """The client offers permessage-deflate (as browsers do); the server takes it only with FLEET_WS_COMPRESSION."""
    ping = '{"type": "command", "command": "ping"}'
    with ws_connect(f"ws://127.0.0.1:{port}/api/v1/ws/execution", open_timeout=BOUND_S) as ws:
        assert ws.response is not None and ws.response.headers.get("Sec-WebSocket-Extensions") is None
        ws.send(ping)
        assert "pong" in str(ws.recv(timeout=BOUND_S))
    with (
        _serving(tmp_path / "data", ws_compression=True) as compressed,
        ws_connect(f"ws://127.0.0.1:{compressed}/api/v1/ws/execution", open_timeout=BOUND_S) as ws,
    ):
        assert ws.response is not None
        assert "permessage-deflate" in (ws.response.headers.get("Sec-WebSocket-Extensions") or "")
        ws.send(ping)
        assert "pong" in str(ws.recv(timeout=BOUND_S))
