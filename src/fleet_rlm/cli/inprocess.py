"""The embedded server behind `fleet` and `fleet-rlm chat|run` without --url-server.

The real app (`create_app(settings)`) runs under uvicorn on a background thread, bound to 127.0.0.1 on an
ephemeral port, and the CLI talks to it through the same `FleetClient` it uses for remote servers. So the
terminal behaves identically in both modes, and sessions land in the same data dir the web server uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError

STARTUP_TIMEOUT_S = 120.0


class EmbeddedServer:
    """uvicorn on a daemon thread; `start()` returns once the app's lifespan finished and a port is bound."""

    def __init__(self, settings: Settings, app: FastAPI | None = None, *, log_file: Path | None = None) -> None:
        from fleet_rlm.api.app import create_app

        self.settings = settings
        self.app = app if app is not None else create_app(settings)
        extra: dict[str, Any] = {}
        if log_file is not None:  # the server's logs (tracebacks included) belong in a file, not the chat screen
            extra["log_config"] = None
            handler = logging.FileHandler(log_file, encoding="utf-8")
            handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
            logging.getLogger().addHandler(handler)
            logging.getLogger().setLevel(logging.WARNING)
        config = uvicorn.Config(
            self.app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", access_log=False, **extra
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, name="fleet-embedded-server", daemon=True)
        self.failure: BaseException | None = None

    def _run(self) -> None:
        try:
            asyncio.run(self.server.serve())
        except BaseException as exc:  # reported to the caller by start()
            self.failure = exc

    def start(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise self._startup_error()
            time.sleep(0.02)
        return self.base_url

    @property
    def port(self) -> int:
        for server in self.server.servers:
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        raise FleetError("the embedded server has no bound socket", code="embedded_server_failed")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)

    def _startup_error(self) -> FleetError:
        self.server.should_exit = True
        failure: Any = self.failure
        if isinstance(failure, FleetError):
            return failure
        detail = f": {failure}" if failure else " (see logs/ in the data dir)"
        return FleetError(
            f"the embedded server did not start{detail}",
            code="embedded_server_failed",
            action="run `fleet-rlm doctor` to see which dependency is failing",
        )


@contextlib.contextmanager
def embedded_server(settings: Settings, app: FastAPI | None = None, *, log_file: Path | None = None) -> Iterator[str]:
    """Run the app for the duration of the block; yields its base URL."""
    server = EmbeddedServer(settings, app, log_file=log_file)
    try:
        yield server.start()
    finally:
        server.stop()
