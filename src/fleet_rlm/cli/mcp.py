"""`fleet-rlm mcp`: fleet-rlm as an MCP server on stdio, for desktop agents and IDEs.

It relays to the `/mcp` endpoint of the CLI's local server (started on first use and reused, see
`local_server.py`; attached for as long as the MCP client keeps stdin open) or, with --url-server, of a running
server (bearer token from FLEET_TOKEN). stdout carries only MCP messages; notices go to stderr.
"""

from __future__ import annotations

import os

import typer

from fleet_rlm.cli.errors import guarded
from fleet_rlm.cli.options import ServerOption

TOKEN_ENV = "FLEET_TOKEN"


def mcp(url_server: str | None = ServerOption) -> None:
    """Serve fleet-rlm's MCP tools and resources over stdio (run a task, sessions, history, events, cancel)."""

    def body() -> None:
        import anyio

        from fleet_rlm.mcp_server.relay import relay_stdio

        token = os.environ.get(TOKEN_ENV)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if url_server:
            anyio.run(relay_stdio, url_server.rstrip("/") + "/mcp", headers)
            return
        from fleet_rlm.cli.local_server import ensure_local_server
        from fleet_rlm.cli.settings_memo import cli_settings

        server = ensure_local_server(cli_settings(), notice=lambda text: typer.echo(text, err=True))
        try:
            anyio.run(relay_stdio, server.base_url + "/mcp", {**headers, **server.headers})
        finally:
            server.detach()

    guarded(body)
