"""How uvicorn serves the app: a slow-header guard, sane timeouts and a graceful stop that bounds running turns.

uvicorn has no header-read timeout: `timeout_keep_alive` only runs between requests, so a client that connects
and trickles a request line (slowloris) holds its socket forever. `GuardedH11Protocol` closes a connection whose
request headers are not complete within `http_header_timeout_s` of its first byte (or of the connection).

On SIGTERM / Ctrl-C, `FleetServer` first drains the turn service while the listener stays open: new turns get
`503 shutting_down`, running ones get `shutdown_grace_s` to finish, then are stopped and recorded
`interrupted`. Only then does uvicorn close connections (SSE streams have ended by then) and run the lifespan
shutdown. A second Ctrl-C skips the rest of the grace.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from fleet_rlm.config import Settings

log = logging.getLogger("uvicorn.error")  # uvicorn configures this one, so operators see these lines
CLOSE_CONNECTIONS_S = 5  # after the drain: how long open connections (idle sockets, WebSockets) may linger


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol plus a deadline for each request's headers (read from the uvicorn Config)."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.header_timeout_s: float = getattr(config, "fleet_header_timeout_s", 10.0)
        self._header_timer: asyncio.TimerHandle | None = None
        self._upgraded = False

    def _awaiting_headers(self) -> bool:
        return not self._upgraded and (self.cycle is None or self.cycle.response_complete)

    def _arm(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self._awaiting_headers() and not self.transport.is_closing():
            log.info("closing a connection from %s: request headers not complete in time", self.client)
            if self.conn.our_state in (h11.IDLE, h11.DONE):
                try:
                    self.conn.send(h11.ConnectionClosed())
                except h11.LocalProtocolError:  # pragma: no cover - state raced; closing is all that matters
                    pass
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._awaiting_headers():
            self._arm()  # a new request began arriving: its deadline runs from here, not from each byte
        else:
            self._disarm()

    def on_response_complete(self) -> None:
        self._disarm()  # between requests the keep-alive timeout applies
        super().on_response_complete()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._upgraded = True
        self._disarm()
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def _fleet_app(app: Any) -> Any:
    """The FastAPI app under uvicorn's wrappers (they keep the wrapped app as `.app`)."""
    for _ in range(8):
        if app is None:
            return None
        state = getattr(app, "state", None)
        if state is not None and hasattr(state, "turns"):
            return app
        app = getattr(app, "app", None)
    return None


class FleetServer(uvicorn.Server):
    """uvicorn.Server whose shutdown drains the turn service first (see the module docstring)."""

    async def shutdown(self, sockets: Any = None) -> None:
        app = _fleet_app(self.config.loaded_app)
        if app is not None:
            grace = float(getattr(self.config, "fleet_shutdown_grace_s", 10.0))
            running = len(app.state.turns.tasks)
            log.info("stopping: no new turns; %d running turn(s) have %.0f s to finish", running, grace)
            drain = asyncio.ensure_future(app.state.turns.drain(grace))
            while not drain.done() and not self.force_exit:
                await asyncio.wait({drain}, timeout=0.1)
            log.info("turns drained")
            if drain.done() and not drain.cancelled() and drain.exception() is not None:
                log.error("draining turns failed: %s", drain.exception())
            elif not drain.done():
                drain.cancel()
        await super().shutdown(sockets)


def uvicorn_config(settings: Settings, app: Any, **extra: Any) -> uvicorn.Config:
    """Timeouts and limits for a server that may face the network (still put a reverse proxy in front)."""
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        http=GuardedH11Protocol,
        timeout_keep_alive=settings.http_keep_alive_s,
        timeout_graceful_shutdown=CLOSE_CONNECTIONS_S,
        limit_concurrency=settings.http_max_connections,
        ws_per_message_deflate=settings.ws_compression,
        **extra,
    )
    config.fleet_header_timeout_s = settings.http_header_timeout_s  # type: ignore[attr-defined]
    config.fleet_shutdown_grace_s = settings.shutdown_grace_s  # type: ignore[attr-defined]
    return config
