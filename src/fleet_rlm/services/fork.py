"""Fork a session after one of its turns: a new session whose history is the origin's first N turns.

What a fork gets and what it does not is stated once, in `fleet_rlm.events.sessions` (FORK_SHARED /
FORK_NOT_SHARED), and recorded as the fork's first event (`session_forked`) in a run of its own that is
final from the start (execution mode `fork`, no turn). The inherited turns are copies that keep pointing at
the origin's runs, so the next turn's history (built from the session's turns) is exactly the kept turns, and
the running summary is the one the origin had after its last kept turn, not the origin's latest. The fork
holds the context sources the kept turns added (those the origin still holds): their documents and clones are
hard-linked into the fork's own context directory, so its next turn gets them without a second copy.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.errors import Conflict, InvalidInput, NotFound
from fleet_rlm.events import SessionForked
from fleet_rlm.events.status import ACTIVE
from fleet_rlm.sandbox.context_view import share_context
from fleet_rlm.services.live.codec import to_new_event
from fleet_rlm.store import Database
from fleet_rlm.store.models import ChatSession, Run, Turn
from fleet_rlm.store.repos import forks, runs, session_sources, sessions, turns
from fleet_rlm.store.types import new_id

FORK_MODE = "fork"
TITLE_MAX = 500


async def fork_session(
    db: Database,
    *,
    user_id: str,
    session_id: str,
    after_turn: int | None = None,
    title: str | None = None,
    data_dir: Path | None = None,
) -> ChatSession:
    """Create the fork (one transaction): copied turns, the summary at the fork point, the `session_forked` run,
    the context sources of the kept turns; then (with `data_dir`) link their documents into the fork's."""
    async with db.transaction() as s:
        origin = await sessions.get_session(s, user_id=user_id, session_id=session_id)
        if origin is None:
            raise NotFound(
                f"session {session_id} not found", action="check the session id (list yours with GET /api/v1/sessions)"
            )
        history = await turns.list_turns(s, session_id=origin.id)
        kept_count = len(history) if after_turn is None else after_turn
        if kept_count > len(history):
            raise InvalidInput(
                f"session {origin.id} has {len(history)} turns; it cannot be forked after turn {kept_count}",
                code="invalid_turn",
                action=f"pass an after_turn between 0 and {len(history)} (turns count from 1)",
            )
        kept = history[:kept_count]
        await _require_finished(s, kept)
        fork = await forks.create_fork(
            s, origin=origin, after_turn=kept_count, title=_title(origin, title, kept_count), turns=kept
        )
        fork.summary = await _summary_after(s, kept)
        run = await _record_fork(s, fork=fork, origin=origin, after_turn=kept_count, origin_turns=len(history))
        fork.last_run_id = run.id
        held = await session_sources.copy_sources(s, origin_id=origin.id, fork_id=fork.id, before_turn=kept_count)
        await s.flush()
    names = sorted({row.document for row in held} | {row.clone for row in held if row.clone})
    if data_dir is not None and names:
        await asyncio.to_thread(share_context, data_dir, origin.id, fork.id, names)
    return fork


async def _require_finished(s: AsyncSession, kept: list[Turn]) -> None:
    """A turn still running has no answer yet; forking it would freeze a half-made history."""
    for turn in kept:
        if turn.run_id is None:
            continue
        run = await runs.get_run(s, run_id=turn.run_id)
        if run is not None and run.status in ACTIVE:
            raise Conflict(
                f"turn {turn.index + 1} is still {run.status} (run {run.id})",
                code="turn_running",
                action="wait for it to finish or cancel it, or fork after an earlier turn",
            )


async def _summary_after(s: AsyncSession, kept: list[Turn]) -> str | None:
    """The `summary` event of the last kept turn's run: the session summary the origin had at that point."""
    run_ids = [turn.run_id for turn in kept if turn.run_id]
    if not run_ids:
        return None
    payload = await forks.last_event_payload(s, run_id=run_ids[-1], type="summary")
    text = (payload or {}).get("text")
    return text if isinstance(text, str) and text else None


async def _record_fork(
    s: AsyncSession, *, fork: ChatSession, origin: ChatSession, after_turn: int, origin_turns: int
) -> Run:
    run_id = new_id()
    event = SessionForked(
        run_id=run_id,
        session_id=fork.id,
        actor="runner",
        origin_session_id=origin.id,
        after_turn=after_turn,
        origin_turns=origin_turns,
    )
    return await forks.add_record_run(
        s, run_id=run_id, user_id=fork.user_id, session_id=fork.id, execution_mode=FORK_MODE, event=to_new_event(event)
    )


def _title(origin: ChatSession, title: str | None, after_turn: int) -> str:
    if title and title.strip():
        return title.strip()[:TITLE_MAX]
    base = origin.title or "untitled"
    return f"{base} (fork after turn {after_turn})"[:TITLE_MAX]
