"""A hostile MCP server for the tests, written with the `mcp` SDK's server side: `python hostile_server.py` serves
stdio, `python hostile_server.py http` serves streamable HTTP on a loopback port (printed on stdout), and
`serve_http()` runs that in a process of its own (its memory is not the test's).

Tools: huge (structured content of `mb` megabytes), deep (lists nested `levels` deep), many (`count` items),
fine (a small answer: the session still works after a refusal) and query (so a server named `rlm` offers a tool
whose old name, `rlm_query`, was a built-in).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("hostile-tools", log_level="WARNING")


@server.tool()
def huge(mb: float = 200.0) -> dict[str, Any]:
    """Structured content of about `mb` megabytes."""
    return {"blob": "x" * int(mb * 1_000_000)}


@server.tool()
def deep(levels: int = 150) -> dict[str, Any]:
    """Lists nested `levels` deep."""
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return {"nested": value}


@server.tool()
def many(count: int = 1_000_000) -> dict[str, Any]:
    """A list of `count` zeros (about 2 bytes each on the wire)."""
    return {"items": [0] * count}


@server.tool()
def fine() -> str:
    """A small answer."""
    return "fine"


@server.tool()
def query(text: str = "") -> str:
    """Named like the second half of the built-in rlm_query."""
    return f"query:{text}"


@contextmanager
def serve_http() -> Iterator[str]:
    """The server on streamable HTTP in its own process; yields the /mcp URL."""
    process = subprocess.Popen([sys.executable, __file__, "http"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline().strip())
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _run_http() -> None:
    import asyncio
    import threading
    import time

    import uvicorn

    app = server.streamable_http_app(streamable_http_path="/mcp")
    http = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=lambda: asyncio.run(http.serve()), daemon=True)
    thread.start()
    while not http.started:
        time.sleep(0.02)
    print(next(int(sock.getsockname()[1]) for srv in http.servers for sock in srv.sockets), flush=True)
    thread.join()


if __name__ == "__main__":
    if sys.argv[1:] == ["http"]:
        _run_http()
    else:
        server.run("stdio")
