"""REPL state a session's turn starts from: a fork's first turn loads its origin's REPL at the fork point.

The origin's REPL after the fork point is the last root snapshot among the runs of the kept turns (the REPL
outlives turns, so a last kept turn that ran no code leaves the one before it). It is loaded while the fork has
no snapshot of its own, i.e. into the fork's first sandbox; values the snapshot could not keep are named in the
`repl_restored` event with the ones the sandbox could not load.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.runtime.repl_snapshots import ReplRestore
from fleet_rlm.store.models import ChatSession, Turn
from fleet_rlm.store.repos import snapshots as repo


async def fork_restore(session: AsyncSession, chat: ChatSession, turns: Sequence[Turn]) -> ReplRestore | None:
    """The REPL a fork's next turn starts from, or None (not a fork, or it already has a REPL of its own)."""
    if chat.forked_from_id is None:
        return None
    run_ids = [turn.run_id for turn in turns if turn.run_id]
    if not run_ids or await repo.session_has_snapshots(session, session_id=chat.id):
        return None
    snapshot = await repo.last_snapshot(session, run_ids=run_ids)
    if snapshot is None:
        return None
    texts = await repo.blob_texts(session, hashes=set(snapshot.variables.values()))
    values = {name: texts[h] for name, h in snapshot.variables.items() if h in texts}
    missing = {name: "its value was not stored" for name, h in snapshot.variables.items() if h not in texts}
    return ReplRestore(values, {**dict(snapshot.skipped), **missing}, "fork", snapshot.run_id, snapshot.iteration)
