"""Your MCP servers: tool sources for your turns (tools mode and the RLM sandbox). See services/mcp_servers.py for who
may configure what, and docs/mcp.md."""

from __future__ import annotations

from fastapi import APIRouter, Response

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.api.deps import DatabaseDep, SettingsDep
from fleet_rlm.schemas.common import Responses
from fleet_rlm.schemas.mcp_servers import McpServerCreate, McpServerList, McpServerOut, McpServerUpdate
from fleet_rlm.services import mcp_servers as user_mcp

router = APIRouter(prefix="/api/v1/mcp-servers", tags=["mcp-servers"])
NOT_FOUND: Responses = {404: {"description": "No such MCP server for this user."}}
REFUSED: Responses = {
    403: {"description": "A stdio command without admin rights, or a URL on a private address (token/oidc)."},
    409: {"description": "The name is taken (yours or an operator server's), or the limit is reached."},
}


@router.get("", operation_id="listMcpServers", response_model=McpServerList)
async def list_mcp_servers(user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep) -> McpServerList:
    """Your MCP servers, then the operator's (read-only); secret values are never returned."""
    async with database.transaction() as s:
        return await user_mcp.list_all(s, settings, user)


@router.post("", operation_id="createMcpServer", response_model=McpServerOut, status_code=201, responses=REFUSED)
async def create_mcp_server(
    body: McpServerCreate, user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep
) -> McpServerOut:
    """Add a server: a stdio `command` (admins only in token/oidc modes) or a public HTTP `url`."""
    async with database.transaction() as s:
        return await user_mcp.create(s, settings, user, body)


@router.patch(
    "/{server_id}",
    operation_id="updateMcpServer",
    response_model=McpServerOut,
    responses={**NOT_FOUND, **REFUSED},
)
async def update_mcp_server(
    server_id: str, body: McpServerUpdate, user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep
) -> McpServerOut:
    """Change fields (others stay); sending `env` or `headers` replaces the stored values."""
    async with database.transaction() as s:
        return await user_mcp.update(s, settings, user, server_id, body)


@router.delete("/{server_id}", operation_id="deleteMcpServer", status_code=204, responses=NOT_FOUND)
async def delete_mcp_server(server_id: str, user: CurrentUserDep, database: DatabaseDep) -> Response:
    async with database.transaction() as s:
        await user_mcp.delete(s, user_id=user.user_id, server_id=server_id)
    return Response(status_code=204)
