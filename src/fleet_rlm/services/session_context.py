"""The context a session holds, for the side panel and its remove control.

A session holds the sources its turns added (`SessionSource` rows: files, pasted text, URLs, repositories,
workspace paths, with the size the turn saw and the turn that added them); every later turn gets them by
reference (`services.turns.held_sources`) until the user removes one (`remove_source`, effective from the next
turn: its document leaves the session's context directory, so no later sandbox sees it at CONTEXT_DIR). A
fork holds the sources of the turns it kept. Turns of an earlier version (before sessions held sources) are
listed from their root `context_loaded` events, without ids: nothing of those is given to later turns.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.errors import NotFound
from fleet_rlm.events.lifecycle import ContextLoaded
from fleet_rlm.sandbox.context_view import session_context_dir
from fleet_rlm.schemas.sessions import ContextSourceOut
from fleet_rlm.services.live.codec import row_to_json
from fleet_rlm.services.lookups import owned_session
from fleet_rlm.store import Database
from fleet_rlm.store.models import SessionSource
from fleet_rlm.store.repos import events
from fleet_rlm.store.repos import session_sources as sources_repo

MAX_SOURCES = 1000


async def session_context(s: AsyncSession, *, user_id: str, session_id: str) -> list[ContextSourceOut]:
    """The session's sources, oldest turn first (404 for another user's session)."""
    await owned_session(s, user_id=user_id, session_id=session_id)
    held = [_held(row) for row in await sources_repo.list_sources(s, session_id=session_id)]
    earlier = await _earlier_loads(s, session_id=session_id)
    return sorted(held + earlier, key=lambda item: item.turn) if earlier else held


def _held(row: SessionSource) -> ContextSourceOut:
    return ContextSourceOut(
        id=row.id,
        turn=row.turn_index + 1,
        run_id=row.run_id or "",
        source=row.label,
        name=row.name,
        chars=row.chars,
        bytes=row.bytes,
        variable="context",
        truncated=row.truncated,
        document=row.document,
        loaded_at=row.created_at,
    )


async def _earlier_loads(s: AsyncSession, *, session_id: str) -> list[ContextSourceOut]:
    """The root `context_loaded` events without a document: what turns of an earlier version loaded."""
    found = await events.list_session_events(s, session_id=session_id, type="context_loaded", limit=MAX_SOURCES)
    out: list[ContextSourceOut] = []
    for index, row in found:
        if row.depth != 0:
            continue
        try:
            loaded = ContextLoaded.model_validate(row_to_json(row, session_id=session_id))
        except ValidationError:
            continue  # a payload this version cannot read is left out, not guessed at
        if loaded.document is not None:
            continue  # this version's: the session holds it (a row) or it was removed
        out.append(
            ContextSourceOut(
                turn=index + 1,
                run_id=row.run_id,
                source=loaded.source,
                name=loaded.name,
                chars=loaded.chars,
                bytes=loaded.bytes,
                variable=loaded.variable,
                truncated=loaded.truncated,
                loaded_at=row.ts,
            )
        )
    return out


async def remove_source(db: Database, data_dir: Path, *, user_id: str, session_id: str, source_id: str) -> None:
    """Remove one source from the session: later turns neither get it nor see its document at CONTEXT_DIR.

    Its document (and a repository's clone) leaves the session's context directory unless another source of
    the session still uses it. A turn already running keeps what it loaded. 404 `context_source_not_found`."""
    async with db.transaction() as s:
        await owned_session(s, user_id=user_id, session_id=session_id)
        removed = await sources_repo.remove_source(s, session_id=session_id, source_id=source_id)
        if removed is None:
            raise NotFound(
                f"session {session_id} holds no context source {source_id}",
                code="context_source_not_found",
                action="list the session's context with GET /api/v1/sessions/{id}/context",
            )
        rest = await sources_repo.list_sources(s, session_id=session_id)
    unused = [] if any(row.document == removed.document for row in rest) else [removed.document]
    if removed.clone and not any(row.clone == removed.clone for row in rest):
        unused.append(removed.clone)
    await asyncio.to_thread(_delete, session_context_dir(data_dir, session_id), unused)


def _delete(context_dir: Path, names: list[str]) -> None:
    """Delete documents and clones by their name in the (host-only) context directory; never outside it."""
    for name in names:
        target = context_dir / name
        if ".." in Path(name).parts or Path(name).is_absolute() or not target.exists():
            continue
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)
