"""Sessions: list/search, create, read, rename, delete, their committed turns, context, run state and export."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.api.deps import DatabaseDep, SettingsDep, TxDep, live_pool
from fleet_rlm.api.pagination import PageDep
from fleet_rlm.sandbox.context_view import remove_session_context
from fleet_rlm.schemas.common import Responses
from fleet_rlm.schemas.sessions import (
    ActiveRun,
    ForkCreate,
    ForkRef,
    SessionContext,
    SessionCreate,
    SessionDetail,
    SessionExport,
    SessionOut,
    SessionPage,
    SessionState,
    SessionStates,
    SessionUpdate,
    TurnPage,
)
from fleet_rlm.services.fork import fork_session
from fleet_rlm.services.lookups import not_found, owned_session
from fleet_rlm.services.session_context import remove_source, session_context
from fleet_rlm.services.share import Owner, ShareFormat, share_session
from fleet_rlm.services.share_html import CSP
from fleet_rlm.services.turn_views import turns_out
from fleet_rlm.store.repos import forks, runs, sessions, turns

router = APIRouter(prefix="/api/v1/sessions", tags=["sessions"])
NOT_FOUND: Responses = {404: {"description": "No such session for this user."}}
REDACTIONS_HEADER = "X-Redactions"  # an export's redaction counts by kind: `github_token=2, password_field=1` or `none`


@router.get("", operation_id="listSessions", response_model=SessionPage)
async def list_sessions(
    user: CurrentUserDep,
    s: TxDep,
    page: PageDep,
    q: Annotated[str | None, Query(max_length=200, description="Case-insensitive title search.")] = None,
) -> SessionPage:
    """The caller's sessions, most recently updated first."""
    found = await sessions.list_sessions(s, user_id=user.user_id, search=q, limit=page.limit, offset=page.offset)
    items = [SessionOut.model_validate(row) for row in found.items]
    return SessionPage(items=items, total=found.total, limit=found.limit, offset=found.offset)


@router.post("", operation_id="createSession", response_model=SessionOut, status_code=201)
async def create_session(user: CurrentUserDep, s: TxDep, body: SessionCreate) -> SessionOut:
    """A new, empty session in the caller's default workspace."""
    row = await sessions.create_session(
        s, user_id=user.user_id, title=body.title, workspace_id=user.workspace_id, settings=body.settings
    )
    return SessionOut.model_validate(row)


@router.get("/state", operation_id="listSessionStates", response_model=SessionStates)
async def list_session_states(user: CurrentUserDep, s: TxDep) -> SessionStates:
    """Sessions with a queued or running run, each with its latest such run (to restore progress UIs)."""
    active = await runs.list_active_runs(s, user_id=user.user_id)
    latest: dict[str, ActiveRun] = {}
    for run in active:  # newest first: keep the first seen per session
        if run.session_id not in latest:  # list_active_runs holds only ACTIVE runs
            latest[run.session_id] = ActiveRun(id=run.id, status=run.status, created_at=run.created_at)
    items = []
    for session_id, active_run in latest.items():
        chat = await sessions.get_session(s, user_id=user.user_id, session_id=session_id)
        if chat is not None:
            items.append(
                SessionState(session_id=chat.id, title=chat.title, updated_at=chat.updated_at, active_run=active_run)
            )
    return SessionStates(items=items)


@router.get("/{session_id}", operation_id="getSession", response_model=SessionDetail, responses=NOT_FOUND)
async def get_session(session_id: str, user: CurrentUserDep, s: TxDep) -> SessionDetail:
    """The session, its fork origin (`forked_from_id`, `forked_after_turn`) and the sessions forked from it."""
    row = await owned_session(s, user_id=user.user_id, session_id=session_id)
    children = await forks.list_forks(s, user_id=user.user_id, session_id=session_id)
    return SessionDetail.model_validate(
        {**SessionOut.model_validate(row).model_dump(), "forks": [ForkRef.model_validate(c) for c in children]}
    )


@router.post(
    "/{session_id}/fork",
    operation_id="forkSession",
    response_model=SessionOut,
    status_code=201,
    responses={
        **NOT_FOUND,
        409: {"description": "A kept turn is still running (`turn_running`)."},
        422: {"description": "`after_turn` is past the session's last turn (`invalid_turn`)."},
    },
)
async def fork_session_route(
    session_id: str, user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep, body: ForkCreate | None = None
) -> SessionOut:
    """A new session whose history is this session's turns 1..after_turn (default: all of them).

    The turns are copied and keep pointing at the origin's runs (their events and artifacts stay readable);
    attachments and the workspace are shared, the REPL state is not. The fork's `last_run_id` is a run holding
    one `session_forked` event that says so. Only the session's owner can fork it.
    """
    data = body or ForkCreate()
    row = await fork_session(
        database,
        user_id=user.user_id,
        session_id=session_id,
        after_turn=data.after_turn,
        title=data.title,
        data_dir=settings.data_dir,
    )
    return SessionOut.model_validate(row)


@router.patch("/{session_id}", operation_id="updateSession", response_model=SessionOut, responses=NOT_FOUND)
async def update_session(session_id: str, user: CurrentUserDep, s: TxDep, body: SessionUpdate) -> SessionOut:
    """Change title, summary or settings; fields left out stay as they are."""
    changes = body.model_dump(exclude_unset=True)
    if changes.get("title") is None:
        changes.pop("title", None)
    if "settings" in changes and changes["settings"] is None:
        changes.pop("settings")
    row = await sessions.update_session(s, user_id=user.user_id, session_id=session_id, **changes)
    if row is None:
        raise not_found("session", session_id)
    return SessionOut.model_validate(row)


@router.delete("/{session_id}", operation_id="deleteSession", status_code=204, responses=NOT_FOUND)
async def delete_session(
    session_id: str, request: Request, user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep
) -> Response:
    """Delete the session with its turns, runs, events, artifact records, its sandbox and its context documents.

    Workspace files (memory/, artifacts/) stay: they belong to the workspace, not the session.
    """
    async with database.transaction() as s:
        deleted = await sessions.delete_session(s, user_id=user.user_id, session_id=session_id)
    if not deleted:
        raise not_found("session", session_id)
    pool = live_pool(request)
    if pool is not None:
        await asyncio.to_thread(pool.end_session, session_id)
    await asyncio.to_thread(remove_session_context, settings.data_dir, session_id)
    return Response(status_code=204)


@router.get("/{session_id}/turns", operation_id="listSessionTurns", response_model=TurnPage, responses=NOT_FOUND)
async def list_session_turns(session_id: str, user: CurrentUserDep, s: TxDep, page: PageDep) -> TurnPage:
    """The session's committed history, oldest first."""
    await owned_session(s, user_id=user.user_id, session_id=session_id)
    found = await turns.list_turns_page(s, session_id=session_id, limit=page.limit, offset=page.offset)
    items = await turns_out(s, found.items)
    return TurnPage(items=items, total=found.total, limit=found.limit, offset=found.offset)


@router.get(
    "/{session_id}/context", operation_id="getSessionContext", response_model=SessionContext, responses=NOT_FOUND
)
async def get_session_context(session_id: str, user: CurrentUserDep, s: TxDep) -> SessionContext:
    """The context sources the session holds: where each came from, its size, the turn that added it, its file
    in CONTEXT_DIR. Every later turn gets all of them (by reference: nothing is uploaded or fetched again); a
    fork holds those of the turns it kept."""
    return SessionContext(items=await session_context(s, user_id=user.user_id, session_id=session_id))


@router.delete(
    "/{session_id}/context/{source_id}",
    operation_id="removeSessionContextSource",
    status_code=204,
    responses={404: {"description": "No such session, or it holds no such source (`context_source_not_found`)."}},
)
async def remove_session_context_source(
    session_id: str, source_id: str, user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep
) -> Response:
    """Remove one source from the session's context: from the next turn on, the model's `context` and the
    sandbox's CONTEXT_DIR no longer have it (a turn already running keeps what it loaded). The attachment
    itself stays; attach it again to add it back."""
    await remove_source(database, settings.data_dir, user_id=user.user_id, session_id=session_id, source_id=source_id)
    return Response(status_code=204)


@router.get(
    "/{session_id}/export",
    operation_id="exportSession",
    response_model=SessionExport,
    responses={
        **NOT_FOUND,
        200: {
            "description": "The session as a download: the JSON bundle (format=json), one self-contained HTML file "
            "(format=html) or Markdown (format=markdown).",
            "content": {"text/html": {"schema": {"type": "string"}}, "text/markdown": {"schema": {"type": "string"}}},
            "headers": {
                REDACTIONS_HEADER: {
                    "description": "What redaction replaced, counts by kind: `kind=count, ...` or `none` (the "
                    "file says the same: `redactions` in the JSON bundle, the Redaction list in html/markdown).",
                    "schema": {"type": "string"},
                }
            },
        },
    },
)
async def export_session(
    session_id: str,
    user: CurrentUserDep,
    database: DatabaseDep,
    settings: SettingsDep,
    format: Annotated[ShareFormat, Query(description="json (the bundle), html (to share) or markdown.")] = "json",
    redact: Annotated[
        bool | None,
        Query(description="Replace identities and host paths (default: on for html/markdown, off for json)."),
    ] = None,
) -> Response:
    """The session with its turns, runs, every event and artifact metadata. Secrets are removed in every format;
    html and markdown also replace user ids, names and host paths by default (listed at the top of the file).
    What was replaced is counted by kind, in the file and in the X-Redactions header."""
    owner = Owner(
        user_id=user.user_id,
        names=(user.name, user.display_name),
        workspace_id=user.workspace_id,
        workspace_root=user.workspace_root,
    )
    shared = await share_session(database, settings, owner=owner, session_id=session_id, fmt=format, redact=redact)
    headers = {
        "Content-Disposition": f'attachment; filename="{shared.filename}"',
        "X-Content-Type-Options": "nosniff",
        REDACTIONS_HEADER: ", ".join(f"{kind}={count}" for kind, count in shared.redactions.items()) or "none",
    }
    if format == "html":
        headers["Content-Security-Policy"] = CSP
    return Response(shared.content, media_type=shared.media_type, headers=headers)
