"""FleetError -> MCP error: the JSON-RPC error carries the API's stable `code` (and action, status) in `data`.

JSON-RPC codes: invalid input (4xx validation) is INVALID_PARAMS, a missing object is the MCP "resource not
found" code, everything else SERVER_ERROR. Clients match on `data.code`, exactly as on the HTTP `error.code`.
"""

from __future__ import annotations

from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from fleet_rlm.errors import FleetError

RESOURCE_NOT_FOUND = -32002
SERVER_ERROR = -32000


def rpc_code(status: int) -> int:
    if status == 404:
        return RESOURCE_NOT_FOUND
    if status in (400, 413, 422):
        return INVALID_PARAMS
    return SERVER_ERROR


def mcp_error(
    code: str, message: str, *, status: int = 500, action: str | None = None, details: dict[str, Any] | None = None
) -> MCPError:
    data: dict[str, Any] = {"code": code, "status": status}
    if action:
        data["action"] = action
    if details:
        data["details"] = details
    return MCPError(rpc_code(status), message, data)


def from_fleet_error(exc: FleetError) -> MCPError:
    return mcp_error(exc.code, exc.message, status=exc.status, action=exc.action, details=exc.details)
