"""`fleet-rlm mcp` over stdio: relay MCP messages between this process's stdin/stdout and a server's `/mcp`.

Why a relay and not a second server: the tools run turns, and turns belong to one server process per data dir
(the CLI's warm local server: it owns the sandbox pool, the run heartbeats and recovery, and SQLite's single
writer). So the stdio process stays light (no model or web stack), forwards each JSON-RPC message as the SDK
parsed it (no protocol code of ours), and the same `/mcp` implementation serves both transports. Progress
notifications come back on the POST's event stream and go out on stdout in order.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server

log = logging.getLogger(__name__)
READ_TIMEOUT_S = 3600.0  # a run_task call may stream progress for a long time


async def _forward(source: Any, sink: Any, scope: anyio.CancelScope) -> None:
    try:
        async for item in source:
            if isinstance(item, Exception):  # a malformed line or a transport hiccup: log, keep the session
                log.warning("mcp relay dropped a message: %s", item)
                continue
            await sink.send(item)
    finally:
        scope.cancel()  # either side closing ends the relay (stdin EOF: the client went away)


async def relay_stdio(url: str, headers: dict[str, str], *, stdin: Any = None, stdout: Any = None) -> None:
    """Serve MCP on stdio until stdin closes, every message going to and coming from `url`."""
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=READ_TIMEOUT_S))
    async with (
        http,
        streamable_http_client(url, http_client=http) as (up_read, up_write),
        stdio_server(stdin, stdout) as (down_read, down_write),
        anyio.create_task_group() as group,
    ):
        group.start_soon(_forward, down_read, up_write, group.cancel_scope)
        group.start_soon(_forward, up_read, down_write, group.cancel_scope)
