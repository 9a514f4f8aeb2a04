"""The persistence side of the runtime's LM recordings and REPL snapshots: the run's sink hands its recorded items
here, and they are written in the same transaction as the batch of events they arrived with (runtime/recording.py
and runtime/repl_snapshots.py say what an item holds; the runtime itself never touches the store)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.runtime.lm_exchange import LMExchange, RecordedItem, RecordingDone, TurnInputs
from fleet_rlm.runtime.repl_snapshots import ReplSnapshot
from fleet_rlm.store.repos import recordings as repo
from fleet_rlm.store.repos import snapshots as snapshots_repo
from fleet_rlm.store.repos.recordings import NewExchange, StoredExchange
from fleet_rlm.store.repos.snapshots import NewSnapshot


async def store_items(session: AsyncSession, batches: Sequence[tuple[str, Sequence[RecordedItem]]]) -> None:
    """(run_id, items in arrival order) of any number of runs. A turn whose inputs and end arrive in one batch
    (a short turn: the event writer holds a running run's items for up to PERSIST_AFTER_S) is one row of its
    recording, not an INSERT, a read and an UPDATE; and the rows and exchanges of every run in the batch are one
    statement each (a group commit of finishing runs issued three per run)."""
    exchanges: list[tuple[str, NewExchange]] = []
    rows: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []
    snapshots: list[tuple[str, NewSnapshot]] = []
    for run_id, items in batches:
        inputs: dict[str, Any] | None = None
        for item in items:
            if isinstance(item, ReplSnapshot):  # the REPL after one iteration (runtime/repl_snapshots.py)
                snapshots.append((run_id, _snapshot(item)))
            elif isinstance(item, TurnInputs):
                inputs = item.inputs
            elif isinstance(item, LMExchange):
                exchanges.append((run_id, _exchange(item)))
            elif isinstance(item, RecordingDone):
                if inputs is not None:  # the whole recording row at once, as finish_recording would leave it
                    used = {"programs_used": dict(item.programs)} if item.programs else {}
                    totals = {name: getattr(item, name) for name in ("calls", "bytes", "truncated", "status", "answer")}
                    rows.append((run_id, {**inputs, **used}, totals))
                    inputs = None
                else:
                    await repo.finish_recording(
                        session,
                        run_id=run_id,
                        calls=item.calls,
                        size=item.bytes,
                        truncated=item.truncated,
                        status=item.status,
                        answer=item.answer,
                        programs=item.programs,
                    )
        if inputs is not None:
            rows.append((run_id, inputs, None))
    if rows:
        await repo.save_inputs_of_runs(session, rows)
    if exchanges:
        await repo.add_exchanges_of_runs(session, exchanges)
    if snapshots:
        await snapshots_repo.add_snapshots(session, snapshots)


def _snapshot(item: ReplSnapshot) -> NewSnapshot:
    return NewSnapshot(item.actor, item.depth, item.iteration, item.variables, item.blobs, item.skipped, item.cell)


def _exchange(item: LMExchange) -> NewExchange:
    return NewExchange(
        seq=item.seq,
        role=item.role,
        actor=item.actor,
        depth=item.depth,
        request_hash=item.request_hash,
        request=item.request,
        response=item.response,
        error=item.error,
        truncated=item.truncated,
        lm_params=item.lm_params,
    )


def as_exchanges(stored: Sequence[StoredExchange]) -> list[LMExchange]:
    """A run's stored exchanges as the runtime's `LMExchange`s (what a replay or a resumed run answers from)."""
    return [
        LMExchange(
            seq=e.seq,
            role=e.role,
            actor=e.actor,
            depth=e.depth,
            request_hash=e.request_hash,
            request=e.request,
            response=e.response,
            error=e.error,
            truncated=e.truncated,
            lm_params=e.lm_params,
        )
        for e in stored
    ]
