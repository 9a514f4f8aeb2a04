"""Run the fake Daytona server with uvicorn on a free loopback port in a background thread.

    with FakeDaytonaServer() as fake:
        config = DaytonaConfig(api_key=fake.api_key, api_url=fake.api_url, target="us")

The sandbox DTOs point `toolboxProxyUrl` back at this server, so the SDK's toolbox calls arrive here too.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType

import uvicorn

from .app import create_app
from .state import FakeState, RecordedCall

DEFAULT_SNAPSHOTS = ("daytonaio/sandbox:latest",)


class FakeDaytonaServer:
    """A real HTTP/WebSocket server speaking the Daytona API and toolbox API, for tests and local use."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        root: Path | None = None,
        snapshots: tuple[str, ...] = DEFAULT_SNAPSHOTS,
        use_bwrap: bool | None = None,
    ) -> None:
        self.api_key = api_key or "fake-" + secrets.token_hex(12)
        self.host = host
        # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on accepted sockets whose proto is TCP;
        # without it Nagle + delayed ACKs add ~40 ms to every second small WebSocket frame.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self._sock.listen(128)  # connections made before uvicorn starts wait in the backlog
        self.port = self._sock.getsockname()[1]
        self._owns_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="fake-daytona-")) if root is None else root
        self.root.mkdir(parents=True, exist_ok=True)
        self.base_url = f"http://{host}:{self.port}"
        self.state = FakeState(self.root, self.base_url, snapshots, use_bwrap)
        config = uvicorn.Config(
            create_app(self.state, self.api_key),
            log_level="warning",
            lifespan="off",
            ws_ping_interval=None,
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/api"

    @property
    def calls(self) -> list[RecordedCall]:
        return self.state.calls

    def start(self) -> FakeDaytonaServer:
        self._thread = threading.Thread(target=self._run, name="fake-daytona", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("fake Daytona server failed to start")
            time.sleep(0.005)
        return self

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        try:
            await self._server.serve(sockets=[self._sock])
        finally:
            self.state.close()

    async def _close_state(self) -> None:
        self.state.close()

    def stop(self) -> None:
        # Kill sandbox processes first: open log streams and interpreter runs then end normally, so the server
        # does not have to cancel them at shutdown.
        if self._loop is not None and self._loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(self._close_state(), self._loop).result(timeout=15)
            except (RuntimeError, TimeoutError):
                pass
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15)
            self._thread = None
        else:
            self.state.close()
        self._sock.close()
        if self._owns_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def serve_forever(self) -> None:
        """Run in the foreground (the CLI entry point)."""
        try:
            self._run()
        finally:
            self._sock.close()

    def __enter__(self) -> FakeDaytonaServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
