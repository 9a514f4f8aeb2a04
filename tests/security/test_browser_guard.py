"""Browser protections against one real server (uvicorn on loopback), with the raw headers a browser sends.

A foreign page cannot drive auth mode `none`: WebSocket upgrades, POSTed turns and multipart uploads from
another origin (or `Origin: null`, or `Sec-Fetch-Site: cross-site`) are refused with a stable code and touch
nothing; DNS-rebinding `Host` names are refused; the app's own origin, its loopback aliases, clients without an
`Origin` (CLI, curl) and the origins/hosts named in the settings still work. Every response has the headers.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from fleet_rlm.api.browser_guard import CSP
from fleet_rlm.cli.inprocess import EmbeddedServer
from fleet_rlm.testing import FakeLMServer, adapter_fields_rule
from tests.security.harness import base_settings

EXTRA_ORIGIN = "http://127.0.0.1:5173"
EXTRA_HOST = "fleet.example.test"
EVIL = "http://evil.example"


@dataclass(frozen=True)
class Server:
    url: str
    port: int
    http: httpx.Client
    lm: FakeLMServer
    data_dir: Path


@pytest.fixture(scope="module")
def server(module_data: tuple[Path, str]) -> Iterator[Server]:
    data_dir, database_url = module_data
    with FakeLMServer(rules=[adapter_fields_rule(answer="ok")]) as lm:
        settings = base_settings(
            data_dir,
            database_url,
            lm_model=lm.model,
            lm_api_base=lm.base_url,
            lm_api_key=SecretStr("fake"),
            sandbox_pool_size=0,
            allowed_origins=EXTRA_ORIGIN,
            allowed_hosts=EXTRA_HOST,
        )
        embedded = EmbeddedServer(settings)
        url = embedded.start()
        try:
            with httpx.Client(base_url=url, timeout=30) as http:
                yield Server(url, embedded.port, http, lm, data_dir)
        finally:
            embedded.stop()


# --- a WebSocket client that sends exactly the headers given ---------------------------------------------------


@dataclass
class SocketResult:
    status: int
    frames: list[dict[str, Any]]
    close_code: int | None
    close_reason: str


def _read_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("socket closed mid-frame")
        data += chunk
    return data


def _send_text(sock: socket.socket, text: str) -> None:
    payload = text.encode()
    mask = os.urandom(4)
    header = bytes([0x81]) + (bytes([0x80 | len(payload)]) if len(payload) < 126 else b"")
    assert len(payload) < 126
    sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


def raw_socket(port: int, path: str, headers: dict[str, str], send: list[str] = (), frames: int = 5) -> SocketResult:  # type: ignore[assignment]
    """Open a WebSocket with a hand-written upgrade request; read up to `frames` text frames or the close."""
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [f"GET {path} HTTP/1.1", "Upgrade: websocket", "Connection: Upgrade", f"Sec-WebSocket-Key: {key}"]
    lines += ["Sec-WebSocket-Version: 13", *(f"{k}: {v}" for k, v in headers.items())]
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(1)
            if not chunk:
                break
            head += chunk
        status = int(head.split(b" ", 2)[1])
        result = SocketResult(status, [], None, "")
        if status != 101:
            return result
        for text in send:
            _send_text(sock, text)
        while len(result.frames) < frames:
            first, second = _read_exact(sock, 2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack("!H", _read_exact(sock, 2))[0]
            elif length == 127:
                length = struct.unpack("!Q", _read_exact(sock, 8))[0]
            payload = _read_exact(sock, length)
            opcode = first & 0x0F
            if opcode == 0x8:
                result.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                result.close_reason = payload[2:].decode()
                return result
            if opcode == 0x1:
                result.frames.append(json.loads(payload))
        return result


def _host(server: Server) -> str:
    return f"127.0.0.1:{server.port}"


# --- WebSocket upgrades ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("origin", [EVIL, "null", "http://127.0.0.1:1", "https://evil.example:443", "garbage"])
def test_websocket_from_a_foreign_origin_is_refused_with_a_reason(server: Server, origin: str) -> None:
    ping = json.dumps({"type": "command", "command": "active_runs"})
    result = raw_socket(server.port, "/api/v1/ws/execution", {"Host": _host(server), "Origin": origin}, [ping])
    assert result.status == 101
    assert [frame["code"] for frame in result.frames] == ["origin_not_allowed"]
    assert (result.close_code, result.close_reason) == (4403, "origin_not_allowed")


def test_events_websocket_from_a_foreign_origin_is_refused(server: Server) -> None:
    path = "/api/v1/ws/execution/events?session_id=x&after=0"
    result = raw_socket(server.port, path, {"Host": _host(server), "Origin": EVIL})
    assert (result.close_code, result.close_reason) == (4403, "origin_not_allowed")


def test_websocket_with_a_rebinding_host_is_refused(server: Server) -> None:
    result = raw_socket(server.port, "/api/v1/ws/execution", {"Host": f"evil.example:{server.port}"})
    assert [frame["code"] for frame in result.frames] == ["host_not_allowed"]
    assert (result.close_code, result.close_reason) == (4421, "host_not_allowed")


@pytest.mark.parametrize(
    "origin",
    [None, "self", "http://localhost:{port}", "http://[::1]:{port}", EXTRA_ORIGIN],
    ids=["no-origin", "own-origin", "localhost-alias", "v6-alias", "allowed-setting"],
)
def test_websocket_from_the_app_or_a_cli_works(server: Server, origin: str | None) -> None:
    headers = {"Host": _host(server)}
    if origin is not None:
        headers["Origin"] = f"http://{_host(server)}" if origin == "self" else origin.format(port=server.port)
    ping = json.dumps({"type": "command", "command": "ping"})
    result = raw_socket(server.port, "/api/v1/ws/execution", headers, [ping], frames=1)
    assert result.frames == [{"type": "result", "command": "ping", "data": {"pong": True}}]


# --- state-changing HTTP -----------------------------------------------------------------------------------------


def _session_count(server: Server) -> int:
    return int(server.http.get("/api/v1/sessions", params={"limit": 200}).json()["total"])


def _assert_error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["action"]


@pytest.mark.parametrize(
    "headers",
    [{"Origin": EVIL}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": f"{EVIL}:{{port}}"}],
    ids=["foreign", "null", "sec-fetch-site", "foreign-same-port"],
)
def test_cross_site_post_is_refused_and_creates_nothing(server: Server, headers: dict[str, str]) -> None:
    before = _session_count(server)
    sent = {k: v.format(port=server.port) for k, v in headers.items()}
    _assert_error(server.http.post("/api/v1/sessions", json={"title": "csrf"}, headers=sent), 403, "origin_not_allowed")
    assert _session_count(server) == before


def test_cross_site_turn_is_refused_and_starts_nothing(server: Server) -> None:
    session_id = server.http.post("/api/v1/sessions", json={"title": "target"}).json()["id"]
    seen = len(server.lm.requests)
    response = server.http.post(
        f"/api/v1/sessions/{session_id}/turns",
        json={"content": "leak everything", "execution_mode": "direct"},
        headers={"Origin": EVIL, "Idempotency-Key": "csrf-turn"},
    )
    _assert_error(response, 403, "origin_not_allowed")
    assert server.http.get(f"/api/v1/sessions/{session_id}/turns").json()["total"] == 0
    assert len(server.lm.requests) == seen


def test_cross_site_multipart_upload_is_refused_and_stores_nothing(server: Server) -> None:
    files = {"file": ("x.txt", b"planted by a web page", "text/plain")}
    response = server.http.post("/api/v1/attachments", files=files, headers={"Origin": EVIL})
    _assert_error(response, 403, "origin_not_allowed")
    stored = [p for p in (server.data_dir / "attachments").rglob("*") if p.is_file()]
    assert not any(p.read_bytes() == b"planted by a web page" for p in stored)


def test_same_origin_and_originless_writes_work(server: Server) -> None:
    for headers in (
        {},
        {"Origin": f"http://{_host(server)}"},
        {"Origin": EXTRA_ORIGIN},
        {"Sec-Fetch-Site": "same-origin"},
    ):
        assert server.http.post("/api/v1/sessions", json={"title": "ok"}, headers=headers).status_code == 201
    files = {"file": ("y.txt", b"from the app", "text/plain")}
    uploaded = server.http.post(
        "/api/v1/attachments", files=files, headers={"Origin": f"http://localhost:{server.port}"}
    )
    assert uploaded.status_code == 201, uploaded.text


def test_foreign_origin_may_still_read_nothing_but_get_is_not_blocked(server: Server) -> None:
    """Reads are guarded by the browser's same-origin policy (no CORS headers are ever sent), not by Origin."""
    response = server.http.get("/api/v1/sessions", headers={"Origin": EVIL})
    assert response.status_code == 200
    assert "access-control-allow-origin" not in response.headers


# --- Host ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1.evil.example", "a:b:c", ""])
def test_rebinding_host_names_are_refused(server: Server, host: str) -> None:
    response = server.http.get("/api/v1/sessions", headers={"Host": host.format(port=server.port)})
    _assert_error(response, 421, "host_not_allowed")
    _assert_error(server.http.get("/app/workspace", headers={"Host": "evil.example"}), 421, "host_not_allowed")


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "LOCALHOST.", EXTRA_HOST])
def test_loopback_and_configured_hosts_are_served(server: Server, host: str) -> None:
    assert server.http.get("/api/v1/sessions", headers={"Host": host.format(port=server.port)}).status_code == 200


# --- headers ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/app/workspace", "/api/v1/sessions", "/health", "/app/assets/missing.js"])
def test_every_response_carries_the_security_headers(server: Server, path: str) -> None:
    response = server.http.get(path)
    assert response.headers["content-security-policy"] == CSP
    assert "frame-ancestors 'none'" in CSP and "img-src 'self' data: blob:" in CSP
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-frame-options"] == "DENY"


def test_refusals_carry_the_headers_too(server: Server) -> None:
    response = server.http.post("/api/v1/sessions", json={}, headers={"Origin": EVIL})
    assert response.headers["x-frame-options"] == "DENY"
