"""A user's own MCP servers: who may configure what, secrets encrypted at rest, and the specs their turns use.

Rules (the trust model of docs/security.md): with auth `none` the local user is the operator and may configure
anything. In token and oidc modes a stdio server runs a command on the server, so only admins may add or change
one (`403 admin_required`); anyone may add an HTTP URL, which must resolve to public addresses (`403
mcp_url_blocked`) unless the operator sets `FLEET_MCP_ALLOW_PRIVATE_URLS` (it is checked again before every
turn's connection). Names are unique per user and may not shadow an operator server (`409 mcp_server_exists`); a
name or allow-list that would make two tools share a name (`mcp__<server>__<tool>`: a name with `__` or a
trailing `_`, allowed tools that differ only in punctuation) is `422 mcp_name_collision`.
`env` and `headers` values are Fernet-encrypted in the row and only ever decrypted to connect.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.config import Settings
from fleet_rlm.errors import Conflict, FleetError, InvalidInput, NotFound
from fleet_rlm.llm import secret_box
from fleet_rlm.mcp_servers import McpServerSpec, NameCollision
from fleet_rlm.netguard import check_url
from fleet_rlm.runtime.mcp_tools import URL_CODES
from fleet_rlm.schemas.mcp_servers import McpServerCreate, McpServerList, McpServerOut, McpServerUpdate
from fleet_rlm.store.models import McpServer
from fleet_rlm.store.repos import mcp_servers as repo

ACTION = "list them with GET /api/v1/mcp-servers"


class Configurer(Protocol):
    """Who configures servers: the API's principal (its user id and admin role)."""

    @property
    def user_id(self) -> str: ...

    @property
    def is_admin(self) -> bool: ...


def may_add_stdio(settings: Settings, principal: Configurer) -> bool:
    return settings.auth_mode == "none" or principal.is_admin


def _secrets(settings: Settings, row: McpServer) -> dict[str, dict[str, str]]:
    data = secret_box(settings).unseal(row.secrets_encrypted)  # the same sealed form as a profile's headers
    return {"env": dict(data.get("env") or {}), "headers": dict(data.get("headers") or {})}


def _encrypt(settings: Settings, env: dict[str, str], headers: dict[str, str]) -> str | None:
    return secret_box(settings).seal({"env": env, "headers": headers} if env or headers else {})


def spec_of(settings: Settings, row: McpServer) -> McpServerSpec:
    secrets = _secrets(settings, row)
    return McpServerSpec(
        name=row.name,
        command=row.command,
        args=list(row.args),
        env=secrets["env"],
        url=row.url,
        headers=secrets["headers"],
        tools=list(row.tools),
        timeout_s=row.timeout_s,
    )


async def turn_specs(session: AsyncSession, settings: Settings, *, user_id: str) -> tuple[McpServerSpec, ...]:
    """The caller's enabled servers for a turn (a row that no longer decrypts or validates is skipped)."""
    specs = []
    for row in await repo.list_servers(session, user_id=user_id, enabled_only=True):
        try:
            specs.append(spec_of(settings, row))
        except (ValueError, FleetError):
            continue
    return tuple(specs)


def _out(settings: Settings, row: McpServer) -> McpServerOut:
    secrets = _secrets(settings, row)
    return McpServerOut(
        id=row.id,
        name=row.name,
        owner="user",
        transport="stdio" if row.command else "http",
        command=row.command,
        args=list(row.args),
        url=row.url,
        tools=list(row.tools),
        timeout_s=row.timeout_s,
        enabled=row.enabled,
        env_names=sorted(secrets["env"]),
        header_names=sorted(secrets["headers"]),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _operator_out(spec: McpServerSpec) -> McpServerOut:
    return McpServerOut(
        id=None,
        name=spec.name,
        owner="operator",
        transport=spec.transport,
        command=spec.command,
        args=list(spec.args),
        url=spec.url,
        tools=list(spec.tools),
        timeout_s=spec.timeout_s,
        enabled=True,
        env_names=sorted(spec.env),
        header_names=sorted(spec.headers),
    )


async def list_all(session: AsyncSession, settings: Settings, principal: Configurer) -> McpServerList:
    rows = await repo.list_servers(session, user_id=principal.user_id)
    items = [_out(settings, row) for row in rows] + [_operator_out(spec) for spec in settings.mcp_servers]
    return McpServerList(items=items, can_add_stdio=may_add_stdio(settings, principal))


async def _check(settings: Settings, principal: Configurer, spec: McpServerSpec) -> None:
    if spec.command is not None and not may_add_stdio(settings, principal):
        raise FleetError(
            "configuring a stdio MCP server (a command run on the server) is for admins only",
            code="admin_required",
            status=403,
        )
    if spec.url is not None and not (settings.auth_mode == "none" or settings.mcp_allow_private_urls):
        await asyncio.to_thread(check_url, spec.url, allow_private=False, codes=URL_CODES)


def _validated(fields: dict[str, Any]) -> McpServerSpec:
    try:
        return McpServerSpec(**fields)
    except ValidationError as exc:
        causes = [error.get("ctx", {}).get("error") for error in exc.errors()]
        collision = next((cause for cause in causes if isinstance(cause, NameCollision)), None)
        if collision is not None:
            raise InvalidInput(
                str(collision),
                code="mcp_name_collision",
                action="name the server without '__' or a trailing '_', and allow each tool once",
            ) from None
        message = str(exc.errors()[0]["msg"]) if exc.errors() else "invalid MCP server"
        raise InvalidInput(message, code="mcp_server_invalid", action="give a command or a url, not both") from None


async def create(
    session: AsyncSession, settings: Settings, principal: Configurer, body: McpServerCreate
) -> McpServerOut:
    fields = body.model_dump(exclude={"enabled"})
    spec = _validated(fields)
    taken = any(s.name == spec.name for s in settings.mcp_servers)
    if taken or await repo.get_server_by_name(session, user_id=principal.user_id, name=spec.name):
        raise Conflict(f"an MCP server named {spec.name!r} exists", code="mcp_server_exists")
    if len(await repo.list_servers(session, user_id=principal.user_id)) >= repo.MAX_PER_USER:
        raise Conflict(f"at most {repo.MAX_PER_USER} MCP servers per user", code="mcp_server_limit")
    await _check(settings, principal, spec)
    row = await repo.create_server(
        session,
        user_id=principal.user_id,
        name=spec.name,
        command=spec.command,
        args=spec.args,
        url=spec.url,
        tools=spec.tools,
        timeout_s=spec.timeout_s,
        enabled=body.enabled,
        secrets_encrypted=_encrypt(settings, spec.env, spec.headers),
    )
    return _out(settings, row)


async def update(
    session: AsyncSession, settings: Settings, principal: Configurer, server_id: str, body: McpServerUpdate
) -> McpServerOut:
    row = await repo.get_server(session, user_id=principal.user_id, server_id=server_id)
    if row is None:
        raise NotFound(f"MCP server {server_id} not found", action=ACTION)
    current = spec_of(settings, row).model_dump()
    changes = body.model_dump(exclude_unset=True)
    enabled = changes.pop("enabled", None)
    if "url" in changes and changes["url"] is not None:
        current["command"], current["args"], current["env"] = None, [], {}
    if "command" in changes and changes["command"] is not None:
        current["url"], current["headers"] = None, {}
    spec = _validated({**current, **changes})
    await _check(settings, principal, spec)
    updated = await repo.update_server(
        session,
        user_id=principal.user_id,
        server_id=server_id,
        command=spec.command,
        args=spec.args,
        url=spec.url,
        tools=spec.tools,
        timeout_s=spec.timeout_s,
        enabled=row.enabled if enabled is None else enabled,
        secrets_encrypted=_encrypt(settings, spec.env, spec.headers),
    )
    assert updated is not None
    return _out(settings, updated)


async def delete(session: AsyncSession, *, user_id: str, server_id: str) -> None:
    if not await repo.delete_server(session, user_id=user_id, server_id=server_id):
        raise NotFound(f"MCP server {server_id} not found", action=ACTION)
