"""`/mcp`: fleet-rlm's MCP server over streamable HTTP, inside the API app and behind the API's own auth.

Every request is authenticated exactly like an API route (`current_user`: bearer token in token/oidc modes,
the local user with auth `none`); the browser guard (Host/Origin) and the body limit run before it as for any
route. The caller goes to the tools in the ASGI scope's state (`mcp_server.scope`), and `scope["user"]` lets
the SDK refuse a session id presented by another user than the one that opened it (404, as if unknown).
The SDK's own DNS-rebinding check is off: the browser guard already applies the server's Host/Origin rules.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi.security import HTTPAuthorizationCredentials
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import HTTPConnection
from starlette.types import Receive, Scope, Send

from fleet_rlm.api.auth import Principal, current_user
from fleet_rlm.errors import FleetError
from fleet_rlm.mcp_server.scope import STATE_KEY, McpCaller, McpScope
from fleet_rlm.mcp_server.server import build_server

MCP_PATH = "/mcp"
SESSION_IDLE_S = 30 * 60


def _credentials(conn: HTTPConnection) -> HTTPAuthorizationCredentials | None:
    scheme, _, token = conn.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return HTTPAuthorizationCredentials(scheme="Bearer", credentials=token.strip())


async def _refuse(send: Send, exc: FleetError) -> None:
    body = json.dumps({"error": exc.to_dict()}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if exc.status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="fleet-rlm"'))
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class McpMount:
    """The ASGI endpoint of `/mcp`; `run()` must wrap the app's lifespan (it owns the MCP sessions)."""

    def __init__(self) -> None:
        self.server = build_server()
        self.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            session_idle_timeout=SESSION_IDLE_S,
        )
        self.manager = self.server.session_manager

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        conn = HTTPConnection(scope)
        try:
            principal = await current_user(conn, _credentials(conn))
        except FleetError as exc:
            await _refuse(send, exc)
            return
        app_state = conn.app.state
        scope.setdefault("state", {})[STATE_KEY] = McpScope(
            caller=_caller(principal),
            settings=app_state.settings,
            database=app_state.database,
            turns=app_state.turns,
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
