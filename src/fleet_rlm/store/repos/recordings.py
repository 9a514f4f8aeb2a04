"""Recorded LM exchanges of runs and the replay sets made of them.

A request body is stored under its `request_hash` (the runtime's sha256 of the canonical request), a response
body under the sha256 of its canonical JSON; `lm_blobs` keeps one row per hash, inserted ignoring conflicts, so
concurrent runs recording the same prompt never abort each other's transaction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, exists, insert, or_
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import LMBlob, LMRecording, ReplaySet, RunRecording
from fleet_rlm.store.repos._sql import insert_values_ignoring_conflict, upsert_values
from fleet_rlm.store.types import utcnow


@dataclass(frozen=True)
class NewExchange:
    seq: int
    role: str
    actor: str
    depth: int
    request_hash: str
    request: Any
    response: Any
    error: str | None = None
    truncated: bool = False
    lm_params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StoredExchange(NewExchange):
    """An exchange read back with its bodies (None where the recording kept the hash only)."""


def body_hash(body: Any) -> str:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def save_inputs(
    session: AsyncSession, *, run_id: str, inputs: dict[str, Any], totals: dict[str, Any] | None = None
) -> None:
    """The turn's inputs (and, for a turn recorded in one batch, its `finish_recording` totals as columns)."""
    await save_inputs_of_runs(session, [(run_id, inputs, totals)])


async def save_inputs_of_runs(
    session: AsyncSession, rows: Sequence[tuple[str, dict[str, Any], dict[str, Any] | None]]
) -> None:
    """(run_id, inputs, totals or None) of many runs: an upsert per shape (with or without totals), so a batch of
    finishing runs is one statement, and a recording that already has a row gets its columns replaced."""
    now = utcnow()
    values = [
        {"run_id": run_id, "inputs": inputs, **(totals or {}), "created_at": now, "updated_at": now}
        for run_id, inputs, totals in rows
    ]
    await upsert_values(session, _RECORDINGS, values, conflict_columns=["run_id"], keep=("created_at",))


_RECORDINGS: Any = RunRecording.__table__  # type: ignore[attr-defined]


async def add_exchanges(session: AsyncSession, *, run_id: str, exchanges: Sequence[NewExchange]) -> None:
    """One run's exchanges and their bodies (see `add_exchanges_of_runs`)."""
    await add_exchanges_of_runs(session, [(run_id, exchange) for exchange in exchanges])


async def add_exchanges_of_runs(session: AsyncSession, exchanges: Sequence[tuple[str, NewExchange]]) -> None:
    """(run_id, exchange) of any number of runs, with their bodies: each body once per hash, all new blobs in one
    INSERT and all exchanges in one executemany, as column dicts (group commits carry many runs' recordings, so
    per-row or per-run statements and model construction were a large share of the writer's time)."""
    now = utcnow()
    blobs: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    for run_id, exchange in exchanges:
        response_hash = None
        if exchange.request is not None:
            blobs.setdefault(exchange.request_hash, exchange.request)
        if exchange.response is not None:
            response_hash = body_hash(exchange.response)
            blobs.setdefault(response_hash, exchange.response)
        rows.append(
            {
                "run_id": run_id,
                "seq": exchange.seq,
                "role": exchange.role,
                "actor": exchange.actor,
                "depth": exchange.depth,
                "request_hash": exchange.request_hash,
                "response_hash": response_hash,
                "error": exchange.error,
                "truncated": exchange.truncated,
                "lm_params": exchange.lm_params,
                "created_at": now,
            }
        )
    if not rows:
        return
    blob_rows = [
        {"hash": key, "size": len(json.dumps(body, ensure_ascii=False)), "body": body, "created_at": now}
        for key, body in blobs.items()
    ]
    blobs_table: Any = LMBlob.__table__  # type: ignore[attr-defined]
    await insert_values_ignoring_conflict(session, blobs_table, blob_rows, conflict_columns=["hash"])
    await session.execute(_INSERT_EXCHANGES, rows)


_INSERT_EXCHANGES = insert(LMRecording.__table__)  # type: ignore[attr-defined]


async def finish_recording(
    session: AsyncSession,
    *,
    run_id: str,
    calls: int,
    size: int,
    truncated: bool,
    status: str,
    answer: str,
    programs: dict[str, str] | None = None,
) -> RunRecording:
    """Totals and outcome; `programs` (module -> version run) joins the inputs as `programs_used`."""
    row = await session.get(RunRecording, run_id)
    if row is None:
        row = RunRecording(run_id=run_id)
        session.add(row)
    row.calls, row.bytes, row.truncated, row.status, row.answer = calls, size, truncated, status, answer
    if programs:
        row.inputs = {**(row.inputs or {}), "programs_used": dict(programs)}
    row.updated_at = utcnow()
    await session.flush()
    return row


async def get_recording(session: AsyncSession, *, run_id: str) -> RunRecording | None:
    return await session.get(RunRecording, run_id)


async def list_exchanges(session: AsyncSession, *, run_id: str) -> list[StoredExchange]:
    rows = (
        await session.execute(select(LMRecording).where(LMRecording.run_id == run_id).order_by(col(LMRecording.seq)))
    ).scalars()
    recordings = list(rows)
    keys = {r.request_hash for r in recordings} | {r.response_hash for r in recordings if r.response_hash}
    bodies: dict[str, Any] = {}
    if keys:
        blobs = await session.execute(select(LMBlob).where(col(LMBlob.hash).in_(keys)))
        bodies = {b.hash: b.body for b in blobs.scalars()}
    return [
        StoredExchange(
            seq=r.seq,
            role=r.role,
            actor=r.actor,
            depth=r.depth,
            request_hash=r.request_hash,
            request=bodies.get(r.request_hash),
            response=bodies.get(r.response_hash) if r.response_hash else None,
            error=r.error,
            truncated=r.truncated,
            lm_params=dict(r.lm_params or {}),
        )
        for r in recordings
    ]


async def prune_blobs(session: AsyncSession) -> int:
    """Delete bodies no recording points at any more (their runs were deleted); returns how many."""
    referenced = exists().where(
        or_(col(LMRecording.request_hash) == col(LMBlob.hash), col(LMRecording.response_hash) == col(LMBlob.hash))
    )
    result: Any = await session.execute(delete(LMBlob).where(~referenced))
    return int(result.rowcount or 0)


async def save_set(session: AsyncSession, *, user_id: str, name: str, run_ids: Sequence[str]) -> ReplaySet:
    """Create or replace the caller's set `name`."""
    row = await get_set(session, user_id=user_id, name=name)
    if row is None:
        row = ReplaySet(user_id=user_id, name=name, run_ids=list(run_ids))
        session.add(row)
    else:
        row.run_ids = list(run_ids)
        row.updated_at = utcnow()
    await session.flush()
    return row


async def get_set(session: AsyncSession, *, user_id: str, name: str) -> ReplaySet | None:
    stmt = select(ReplaySet).where(ReplaySet.user_id == user_id, ReplaySet.name == name)
    return (await session.execute(stmt)).scalars().first()


async def list_sets(session: AsyncSession, *, user_id: str) -> list[ReplaySet]:
    stmt = select(ReplaySet).where(ReplaySet.user_id == user_id).order_by(col(ReplaySet.name))
    return list((await session.execute(stmt)).scalars())


async def delete_set(session: AsyncSession, *, user_id: str, name: str) -> bool:
    row = await get_set(session, user_id=user_id, name=name)
    if row is None:
        return False
    await session.delete(row)
    await session.flush()
    return True
