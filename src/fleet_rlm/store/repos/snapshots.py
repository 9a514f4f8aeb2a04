"""REPL snapshots of runs (values once per content hash) and the requests runs were started with.

`repl_blobs` rows are inserted ignoring conflicts, so concurrent runs storing the same value never abort each
other's transaction, and an unchanged value adds no row.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import ReplBlob, RunReplSnapshot, RunRequest
from fleet_rlm.store.repos._sql import insert_values_ignoring_conflict
from fleet_rlm.store.types import utcnow


@dataclass(frozen=True)
class NewSnapshot:
    actor: str
    depth: int
    iteration: int
    variables: dict[str, str]
    blobs: dict[str, str]
    skipped: dict[str, str]
    cell: dict[str, Any]


_BLOBS: Any = ReplBlob.__table__  # type: ignore[attr-defined]
_INSERT_SNAPSHOTS = insert(RunReplSnapshot.__table__)  # type: ignore[attr-defined]


async def add_snapshots(session: AsyncSession, snapshots: Sequence[tuple[str, NewSnapshot]]) -> None:
    """(run_id, snapshot) of any number of runs: new values in one INSERT, snapshots in one executemany."""
    if not snapshots:
        return
    now = utcnow()
    blobs: dict[str, str] = {}
    rows = []
    for run_id, snap in snapshots:
        blobs.update(snap.blobs)
        rows.append(
            {
                "run_id": run_id,
                "actor": snap.actor,
                "depth": snap.depth,
                "iteration": snap.iteration,
                "variables": snap.variables,
                "skipped": snap.skipped,
                "cell": snap.cell,
                "created_at": now,
            }
        )
    if blobs:
        values = [{"hash": h, "size": len(text), "body": text, "created_at": now} for h, text in blobs.items()]
        await insert_values_ignoring_conflict(session, _BLOBS, values, conflict_columns=["hash"])
    await session.execute(_INSERT_SNAPSHOTS, rows)


async def list_snapshots(session: AsyncSession, *, run_id: str, actor: str | None = "root") -> list[RunReplSnapshot]:
    """A run's snapshots (of one actor, or all with None) in the order they were taken."""
    query = select(RunReplSnapshot).where(RunReplSnapshot.run_id == run_id)
    if actor is not None:
        query = query.where(RunReplSnapshot.actor == actor)
    return list((await session.execute(query.order_by(col(RunReplSnapshot.id)))).scalars().all())


async def last_snapshot(
    session: AsyncSession, *, run_ids: Sequence[str], actor: str = "root"
) -> RunReplSnapshot | None:
    """The latest snapshot of `actor` among these runs (the last run that has one wins)."""
    query = (
        select(RunReplSnapshot)
        .where(col(RunReplSnapshot.run_id).in_(list(run_ids)), RunReplSnapshot.actor == actor)
        .order_by(col(RunReplSnapshot.id).desc())
        .limit(1)
    )
    return (await session.execute(query)).scalars().first()


async def blob_texts(session: AsyncSession, *, hashes: Collection[str]) -> dict[str, str]:
    if not hashes:
        return {}
    rows = await session.execute(select(ReplBlob.hash, ReplBlob.body).where(col(ReplBlob.hash).in_(list(hashes))))
    return {h: body for h, body in rows.all()}


async def count_blobs(session: AsyncSession) -> int:
    return int((await session.execute(select(func.count()).select_from(ReplBlob))).scalar_one())


async def save_request(session: AsyncSession, *, run_id: str, workspace_id: str, turn_input: dict[str, Any]) -> None:
    session.add(RunRequest(run_id=run_id, workspace_id=workspace_id, turn_input=turn_input))


async def get_request(session: AsyncSession, *, run_id: str) -> RunRequest | None:
    return await session.get(RunRequest, run_id)


async def session_has_snapshots(session: AsyncSession, *, session_id: str) -> bool:
    """Whether a run of this session (not an inherited one of its origin) kept a snapshot."""
    from fleet_rlm.store.models import Run

    query = (
        select(RunReplSnapshot.id)
        .join(Run, col(Run.id) == col(RunReplSnapshot.run_id))
        .where(Run.session_id == session_id)
        .limit(1)
    )
    return (await session.execute(query)).first() is not None
