"""Who calls and what they reach, for one MCP request: set by the mount (`api/mcp_endpoint.py`) in the ASGI
scope's state after it authenticated the HTTP request, read by every tool and resource.

Nothing here trusts the MCP session: each HTTP request carries its own credentials, and the SDK refuses a
session id presented by another user than the one that opened it (the mount sets `scope["user"]`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet_rlm.config import Settings
from fleet_rlm.mcp_server.errors import mcp_error
from fleet_rlm.store import Database

if TYPE_CHECKING:
    from fleet_rlm.services.turns.service import TurnService

STATE_KEY = "fleet_mcp"


@dataclass(frozen=True)
class McpCaller:
    user_id: str
    name: str
    workspace_id: str
    workspace_root: Path
    is_admin: bool = False


@dataclass(frozen=True)
class McpScope:
    caller: McpCaller
    settings: Settings
    database: Database
    turns: TurnService


def current(ctx: Any) -> McpScope:
    """The scope of the HTTP request that carried this MCP message; `unauthorized` when there is none."""
    request = getattr(ctx.request_context, "request", None)
    state = getattr(request, "scope", {}).get("state") or {}
    scope = state.get(STATE_KEY)
    if not isinstance(scope, McpScope):
        raise mcp_error("unauthorized", "this MCP request carries no authenticated caller", status=401)
    return scope
