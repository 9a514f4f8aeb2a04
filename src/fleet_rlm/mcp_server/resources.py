"""MCP resources: your sessions (a list, and each with its turns) and artifacts (metadata and content).

URIs: `fleet://sessions` (`?q=` searches titles), `fleet://sessions/{session_id}` and
`fleet://artifacts/{artifact_id}` (the file's content, UTF-8 text or bytes, read confined to the caller's
workspace like the download route).
"""

from __future__ import annotations

import asyncio
import base64
import json

from mcp.server.mcpserver import Context, MCPServer

from fleet_rlm.errors import FleetError
from fleet_rlm.mcp_server.errors import from_fleet_error
from fleet_rlm.mcp_server.outputs import SessionInfo, TurnInfo
from fleet_rlm.mcp_server.scope import current
from fleet_rlm.services.lookups import owned_artifact, owned_session
from fleet_rlm.services.volume import read_file
from fleet_rlm.store.repos import artifacts as artifacts_repo
from fleet_rlm.store.repos import sessions as sessions_repo
from fleet_rlm.store.repos import turns as turns_repo

ARTIFACT_MAX_BYTES = 5 * 1024 * 1024
LIST_LIMIT = 100


async def sessions_index(ctx: Context, q: str = "") -> str:
    """Your 100 most recently updated sessions (`?q=` searches titles), each with its resource URI."""
    scope = current(ctx)
    async with scope.database.transaction() as s:
        found = await sessions_repo.list_sessions(s, user_id=scope.caller.user_id, search=q or None, limit=LIST_LIMIT)
    items = [
        {**SessionInfo.model_validate(row).model_dump(mode="json"), "uri": f"fleet://sessions/{row.id}"}
        for row in found.items
    ]
    return json.dumps({"items": items, "total": found.total})


async def session_resource(session_id: str, ctx: Context) -> str:
    """One session with its turns and its artifacts' URIs."""
    scope = current(ctx)
    user_id = scope.caller.user_id
    try:
        async with scope.database.transaction() as s:
            chat = await owned_session(s, user_id=user_id, session_id=session_id)
            turns = await turns_repo.list_turns(s, session_id=session_id)
            artifacts = await artifacts_repo.list_artifacts(s, user_id=user_id, session_id=session_id, limit=200)
    except FleetError as exc:
        raise from_fleet_error(exc) from None
    body = {
        **SessionInfo.model_validate(chat).model_dump(mode="json"),
        "turns": [TurnInfo.model_validate(turn).model_dump(mode="json") for turn in turns],
        "artifacts": [
            {"id": a.id, "name": a.name, "size": a.size, "uri": f"fleet://artifacts/{a.id}"} for a in artifacts.items
        ],
    }
    return json.dumps(body)


async def artifact_resource(artifact_id: str, ctx: Context) -> str | bytes:
    """An artifact's content (the first 5 MiB): text when it is UTF-8, else bytes."""
    scope = current(ctx)
    try:
        async with scope.database.transaction() as s:
            row = await owned_artifact(s, user_id=scope.caller.user_id, artifact_id=artifact_id)
        found = await asyncio.to_thread(read_file, scope.caller.workspace_root, row.path, max_bytes=ARTIFACT_MAX_BYTES)
    except FleetError as exc:
        raise from_fleet_error(exc) from None
    if found.encoding == "utf-8":
        return found.content
    return base64.b64decode(found.content)


def register_resources(server: MCPServer) -> None:
    server.resource("fleet://sessions{?q}", name="sessions", mime_type="application/json")(sessions_index)
    server.resource("fleet://sessions/{session_id}", name="session", mime_type="application/json")(session_resource)
    server.resource("fleet://artifacts/{artifact_id}", name="artifact")(artifact_resource)
