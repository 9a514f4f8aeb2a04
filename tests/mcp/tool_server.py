"""A small MCP server for the tests, written with the `mcp` SDK: `python tool_server.py` serves stdio;
`serve_http()` serves streamable HTTP on a loopback port. Tools: echo, add, fail (always errors), hang
(sleeps far past any test's time limit), env_probe (which of our variables the process sees) and hidden
(never allow-listed)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("test-tools", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back, prefixed with 'echo:'."""
    return f"echo:{text}"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def fail(reason: str = "boom") -> str:
    """Always fails."""
    raise ToolError(f"deliberate failure: {reason}")


@server.tool()
async def hang(seconds: float = 3600.0) -> str:
    """Sleeps (far longer than any time limit)."""
    await asyncio.sleep(seconds)
    return "woke up"


@server.tool()
def env_probe() -> str:
    """Names of the FLEET_/DSPY_/OPENAI_ variables this process sees."""
    seen = sorted(k for k in os.environ if k.startswith(("FLEET_", "DSPY_", "OPENAI_")))
    return ",".join(seen) or "none"


@server.tool()
def hidden() -> str:
    """Not on any allow-list."""
    return "should never be callable"


@contextmanager
def serve_http() -> Iterator[str]:
    """The server on streamable HTTP (uvicorn, loopback, ephemeral port); yields the /mcp URL."""
    import uvicorn

    app = server.streamable_http_app(streamable_http_path="/mcp")
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    http = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(http.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not http.started:
        assert time.monotonic() < deadline, "test MCP server did not start"
        time.sleep(0.02)
    port = next(int(sock.getsockname()[1]) for srv in http.servers for sock in srv.sockets)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        http.should_exit = True
        thread.join(timeout=10)


if __name__ == "__main__":
    server.run("stdio")
    sys.exit(0)
