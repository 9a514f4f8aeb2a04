"""The MCP tools: run a task (progress per event, the answer as result), list sessions, read a session's
history, read a run's events, cancel a run. Each calls the same domain functions as the HTTP routes
(`TurnService.start/cancel`, `follow_run`, the owner-scoped repositories), never the HTTP API itself.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field, ValidationError

from fleet_rlm.errors import FleetError
from fleet_rlm.events import TERMINAL_TYPES
from fleet_rlm.mcp_server.errors import from_fleet_error, mcp_error
from fleet_rlm.mcp_server.outputs import (
    CancelState,
    EventPage,
    RunResult,
    SessionInfo,
    SessionList,
    TurnInfo,
    TurnList,
)
from fleet_rlm.mcp_server.progress import describe
from fleet_rlm.mcp_server.scope import McpScope, current
from fleet_rlm.services.live.codec import row_to_json
from fleet_rlm.services.live.follow import follow_run
from fleet_rlm.services.lookups import owned_run, owned_session
from fleet_rlm.services.turns.inputs import TurnInput
from fleet_rlm.services.turns.run_deps import Caller
from fleet_rlm.store.repos import events as events_repo
from fleet_rlm.store.repos import sessions as sessions_repo
from fleet_rlm.store.repos import turns as turns_repo

Mode = Literal["auto", "direct", "tools", "rlm"]
MAX_EVENTS = 1000
TITLE_CHARS = 80


def _caller(scope: McpScope) -> Caller:
    c = scope.caller
    return Caller(user_id=c.user_id, workspace_id=c.workspace_id, workspace_dir=c.workspace_root)


def _turn_input(**fields: Any) -> TurnInput:
    try:
        return TurnInput(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "input"
        raise mcp_error("invalid_input", f"{where}: {first.get('msg')}", status=422) from None


async def run_task(
    task: Annotated[str, Field(description="The task or question.")],
    ctx: Context,
    execution_mode: Annotated[Mode | None, Field(description="auto (default), direct, tools or rlm.")] = None,
    context_text: Annotated[str | None, Field(description="Pasted text to use as context.")] = None,
    urls: Annotated[list[str] | None, Field(description="URLs to fetch as context.")] = None,
    attachment_ids: Annotated[list[str] | None, Field(description="Ids of uploaded attachments.")] = None,
    session_id: Annotated[str | None, Field(description="Continue this session; a new one when omitted.")] = None,
) -> RunResult:
    """Run a task on fleet-rlm and wait for its answer; every step of the run is a progress notification."""
    scope = current(ctx)
    data = _turn_input(
        content=task,
        execution_mode=execution_mode,
        context_text=context_text,
        urls=urls or [],
        attachment_ids=attachment_ids or [],
    )
    created: str | None = None
    try:
        data.require_task()
        if session_id is None:
            async with scope.database.transaction() as s:
                chat = await sessions_repo.create_session(
                    s,
                    user_id=scope.caller.user_id,
                    title=" ".join(task.split())[:TITLE_CHARS],
                    workspace_id=scope.caller.workspace_id,
                )
                session_id = created = chat.id
        run = await scope.turns.start(
            _caller(scope), session_id=session_id, data=data, idempotency_key=f"mcp-{uuid.uuid4().hex}"
        )
    except FleetError as exc:
        if created is not None:  # refused input leaves no session behind
            async with scope.database.transaction() as s:
                await sessions_repo.delete_session(s, user_id=scope.caller.user_id, session_id=created)
        raise from_fleet_error(exc) from None
    final: dict[str, Any] | None = None
    terminal: dict[str, Any] | None = None
    try:
        async for event in follow_run(scope.database, scope.turns.bus, run_id=run.id, session_id=run.session_id):
            await ctx.report_progress(float(event["seq"]), None, describe(event))
            if event["type"] == "final":
                final = event
            if event["type"] in TERMINAL_TYPES:
                terminal = event
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):  # the client gave up on the call: stop the run it started
            await scope.turns.cancel(user_id=scope.caller.user_id, run_id=run.id)
        raise
    return _outcome(run.id, run.session_id, final, terminal)


def _outcome(run_id: str, session_id: str, final: dict[str, Any] | None, terminal: dict[str, Any] | None) -> RunResult:
    kind = terminal["type"] if terminal else "turn_interrupted"
    ids = {"run_id": run_id, "session_id": session_id}
    if kind == "turn_finished":
        answer = str(final["answer"]) if final else ""
        done = terminal or {}
        return RunResult(
            **ids,
            status="succeeded",
            answer=answer,
            mode=done.get("mode"),
            outcome=done.get("outcome"),
            stop_reason=done.get("stop_reason"),
        )
    if kind == "turn_failed":
        assert terminal is not None
        raise mcp_error(terminal["code"], terminal["message"], action=terminal.get("action"), details=ids)
    reason = str((terminal or {}).get("reason") or "the run ended without an answer")
    code = "run_cancelled" if kind == "turn_cancelled" else "run_interrupted"
    raise mcp_error(code, reason, status=409, action="run the task again", details=ids)


async def list_sessions(
    ctx: Context,
    query: Annotated[str | None, Field(description="Case-insensitive title search.", max_length=200)] = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> SessionList:
    """Your sessions, most recently updated first."""
    scope = current(ctx)
    async with scope.database.transaction() as s:
        found = await sessions_repo.list_sessions(
            s, user_id=scope.caller.user_id, search=query, limit=limit, offset=offset
        )
    return SessionList(items=[SessionInfo.model_validate(row) for row in found.items], total=found.total)


async def session_history(
    session_id: str,
    ctx: Context,
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> TurnList:
    """A session's committed turns (your message and the answer), oldest first."""
    scope = current(ctx)
    try:
        async with scope.database.transaction() as s:
            chat = await owned_session(s, user_id=scope.caller.user_id, session_id=session_id)
            found = await turns_repo.list_turns_page(s, session_id=session_id, limit=limit, offset=offset)
    except FleetError as exc:
        raise from_fleet_error(exc) from None
    items = [TurnInfo.model_validate(row) for row in found.items]
    return TurnList(session_id=chat.id, title=chat.title, items=items, total=found.total)


async def run_events(
    run_id: str,
    ctx: Context,
    after: Annotated[int, Field(ge=0, description="Events with seq > after (0 = from the start).")] = 0,
    limit: Annotated[int, Field(ge=1, le=MAX_EVENTS)] = 200,
) -> EventPage:
    """A run's events in seq order (the same JSON the API streams); page with `next_after`."""
    scope = current(ctx)
    try:
        async with scope.database.transaction() as s:
            run = await owned_run(s, user_id=scope.caller.user_id, run_id=run_id)
            rows = await events_repo.list_events(s, run_id=run_id, after_seq=after, limit=limit)
    except FleetError as exc:
        raise from_fleet_error(exc) from None
    items = [row_to_json(row, session_id=run.session_id) for row in rows]
    last_seq = max(run.last_seq, rows[-1].seq if rows else 0)
    next_after = rows[-1].seq if rows and rows[-1].seq < last_seq else None
    return EventPage(run_id=run.id, status=run.status, items=items, next_after=next_after, last_seq=last_seq)


async def cancel_run(run_id: str, ctx: Context) -> CancelState:
    """Ask a run to stop (durable: whichever server process executes it sees the request)."""
    scope = current(ctx)
    try:
        run = await scope.turns.cancel(user_id=scope.caller.user_id, run_id=run_id)
    except FleetError as exc:
        raise from_fleet_error(exc) from None
    return CancelState(run_id=run.id, status=run.status, cancel_requested=run.cancel_requested_at is not None)


def register_tools(server: MCPServer) -> None:
    for fn in (run_task, list_sessions, session_history, run_events, cancel_run):
        server.add_tool(fn)
