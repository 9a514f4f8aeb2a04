"""Fixtures for the context loaders: a workspace with its roots, settings, and a real HTTP server on loopback."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fleet_rlm.config import Settings


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspaces" / "ws1"
    for sub in ("memory", "artifacts", "buffers", "meta"):
        (root / sub).mkdir(parents=True)
    return root


def make_settings(tmp_path: Path, **overrides: object) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data", **overrides)  # type: ignore[call-arg]


@pytest.fixture
def ctx_settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path, url_allow_private=True)


@dataclass
class Route:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    drip: tuple[int, float] | None = None  # (chunks, seconds between) for slow or length-less bodies


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 serving `routes` (path -> Route); records request Host headers."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Route] = {}
        self.hosts: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server.hosts.append(self.headers.get("Host", ""))
                route = server.routes.get(self.path.split("?", 1)[0], Route(404, b"not found"))
                self.send_response(route.status)
                for key, value in route.headers.items():
                    self.send_header(key, value)
                if route.drip is None:
                    self.send_header("Content-Length", str(len(route.body)))
                    self.end_headers()
                    self.wfile.write(route.body)
                    return
                self.send_header("Connection", "close")
                self.end_headers()
                chunks, pause = route.drip
                try:
                    for _ in range(chunks):
                        self.wfile.write(route.body)
                        self.wfile.flush()
                        time.sleep(pause)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def add(self, path: str, **route: object) -> str:
        self.routes[path] = Route(**route)  # type: ignore[arg-type]
        return self.url(path)


@pytest.fixture
def http_server() -> Iterator[LoopbackServer]:
    server = LoopbackServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


def ctx_of(workspace: Path) -> Path:
    """The session context directory the loaders write to in these tests (outside the workspace)."""
    return workspace.parent.parent / "sessions" / "s1" / "context"
