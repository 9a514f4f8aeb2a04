"""The context a session's turns loaded (documents, their sizes, where they came from), for the side panel.

Read from the turns' `context_loaded` events rather than from attachments: that covers every source (files,
pasted text, URLs, repositories, workspace paths) with the size the turn actually saw, and a fork sees its
inherited turns' context because its copied turns point at the origin's runs. Only root events count: a child
RLM's context is part of its parent's, not the session's.
"""

from __future__ import annotations

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.events.lifecycle import ContextLoaded
from fleet_rlm.schemas.sessions import ContextSourceOut
from fleet_rlm.services.live.codec import row_to_json
from fleet_rlm.services.lookups import owned_session
from fleet_rlm.store.repos import events

MAX_SOURCES = 1000


async def session_context(s: AsyncSession, *, user_id: str, session_id: str) -> list[ContextSourceOut]:
    """Every root `context_loaded` of the session's turns, oldest turn first (404 for another user's session)."""
    await owned_session(s, user_id=user_id, session_id=session_id)
    found = await events.list_session_events(s, session_id=session_id, type="context_loaded", limit=MAX_SOURCES)
    out: list[ContextSourceOut] = []
    for index, row in found:
        if row.depth != 0:
            continue
        try:
            loaded = ContextLoaded.model_validate(row_to_json(row, session_id=session_id))
        except ValidationError:
            continue  # a payload this version cannot read is left out, not guessed at
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
