"""`/mcp`: fleet-rlm's MCP server over streamable HTTP, inside the API app and behind the API's own auth.

Every request is authenticated exactly like an API route (`current_user`: bearer token in token/oidc modes,
the local user with auth `none`); the browser guard (Host/Origin) and the body limit run before it as for any
route. The `mcp` SDK and `fleet_rlm.mcp_server` load on the first authenticated request, not at startup (they
were a third of the server's start, and most servers never see an MCP client): `run()` wraps the app's lifespan
in a task group; the first request imports `mcp_endpoint` on a worker thread (the loop keeps serving) and
starts the SDK's session manager as a task of that group, while concurrent first requests wait for that same
start. When the lifespan ends, the manager is stopped (its sessions closed) before the app shuts down.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup
from fastapi.security import HTTPAuthorizationCredentials
from starlette.requests import HTTPConnection
from starlette.types import Receive, Scope, Send

from fleet_rlm.api.auth import current_user
from fleet_rlm.errors import FleetError

if TYPE_CHECKING:
    from fleet_rlm.api.mcp_endpoint import McpEndpoint

MCP_PATH = "/mcp"


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


def _not_serving() -> FleetError:
    return FleetError(
        "the server is shutting down and serves no MCP requests",
        code="shutting_down",
        action="retry in a moment, once the server is back",
        status=503,
    )


def _import_endpoint() -> type[McpEndpoint]:
    from fleet_rlm.api.mcp_endpoint import McpEndpoint

    return McpEndpoint


class McpMount:
    """The ASGI endpoint of `/mcp`; `run()` must wrap the app's lifespan (it owns the MCP sessions)."""

    def __init__(self) -> None:
        self._endpoint: McpEndpoint | None = None
        self._group: TaskGroup | None = None
        self._stop = anyio.Event()
        self._starting = anyio.Lock()

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        self._stop = anyio.Event()
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                self._group = None  # no new start from here on
                self._stop.set()  # a started manager closes its sessions; the group waits for it
        self._endpoint = None

    async def _started(self) -> McpEndpoint:
        """The running endpoint, loaded and started by the first caller; the others wait for it."""
        if self._endpoint is not None:
            return self._endpoint
        async with self._starting:
            if self._endpoint is None:
                if self._group is None:
                    raise _not_serving()
                endpoint_type = await anyio.to_thread.run_sync(_import_endpoint)  # ~1 s of imports, off the loop
                endpoint = endpoint_type(MCP_PATH)  # built on the loop: the SDK makes anyio primitives
                group = self._group
                if group is None:  # the lifespan ended while the SDK loaded
                    raise _not_serving()
                await group.start(endpoint.serve, self._stop)
                self._endpoint = endpoint
            return self._endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        conn = HTTPConnection(scope)
        try:
            principal = await current_user(conn, _credentials(conn))
            endpoint = await self._started()
        except FleetError as exc:
            await _refuse(send, exc)
            return
        await endpoint.handle(scope, receive, send, principal, conn.app.state)
