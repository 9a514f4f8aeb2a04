"""The `mcp` SDK side of `/mcp`: our MCP server on the SDK's streamable-HTTP session manager.

Imported only by `mcp_mount.py`, on the first authenticated `/mcp` request (the SDK is ~1 s of imports a server
start should not pay). The SDK's own DNS-rebinding check is off: the browser guard already applies the server's
Host/Origin rules. The caller goes to the tools in the ASGI scope's state (`mcp_server.scope`), and
`scope["user"]` lets the SDK refuse a session id presented by another user than the one that opened it (404).
"""

from __future__ import annotations

from typing import Any

import anyio
from anyio.abc import TaskStatus
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from fleet_rlm.api.auth import Principal
from fleet_rlm.mcp_server.scope import STATE_KEY, McpCaller, McpScope
from fleet_rlm.mcp_server.server import build_server

SESSION_IDLE_S = 30 * 60


class McpEndpoint:
    """One MCP server and its session manager; `serve` runs the manager (its sessions) until `stop` is set."""

    def __init__(self, path: str) -> None:
        self.server = build_server()
        self.server.streamable_http_app(
            streamable_http_path=path,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            session_idle_timeout=SESSION_IDLE_S,
        )
        self.manager = self.server.session_manager

    async def serve(self, stop: anyio.Event, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        async with self.manager.run():
            task_status.started()
            await stop.wait()

    async def handle(self, scope: Scope, receive: Receive, send: Send, principal: Principal, state: Any) -> None:
        """One authenticated request: the caller and the app's services into the scope, then the SDK."""
        scope.setdefault("state", {})[STATE_KEY] = McpScope(
            caller=_caller(principal),
            settings=state.settings,
            database=state.database,
            turns=state.turns,
        )
        scope["user"] = AuthenticatedUser(AccessToken(token="", client_id=principal.user_id, scopes=[]))
        await self.manager.handle_request(scope, receive, send)


def _caller(principal: Principal) -> McpCaller:
    return McpCaller(
        user_id=principal.user_id,
        name=principal.name,
        workspace_id=principal.workspace_id,
        workspace_root=principal.workspace_root,
        is_admin=principal.is_admin,
    )
