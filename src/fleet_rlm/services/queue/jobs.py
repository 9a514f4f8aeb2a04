"""Defer, abort and inspect queue jobs inside our own transactions, with Procrastinate's SQL functions.

The API defers a turn's job in the transaction that creates its run (so a run is queued exactly when its job
exists) and aborts it in the one that records the cancel; neither imports procrastinate. A job carries the run's
id only: the worker rebuilds everything else (the caller's LM keys included) from the database.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.services.queue.names import TURNS_QUEUE, WORKER_QUEUE_PREFIX, run_lock

_DEFER = text(
    "SELECT unnest(procrastinate_defer_jobs_v1(ARRAY[ROW(CAST(:queue AS varchar), CAST(:task AS varchar), 0, "
    "CAST(:lock AS text), CAST(:lock AS text), CAST(:args AS jsonb), NULL)::procrastinate_job_to_defer_v1])) AS id"
)
_ABORT = text(
    "SELECT id, status::text, procrastinate_cancel_job_v1(id, true, false) FROM procrastinate_jobs "
    "WHERE lock = :lock AND status IN ('todo', 'doing')"
)
_ALIVE = """
    SELECT w.name FROM queue_workers w JOIN procrastinate_workers p ON p.id = w.queue_worker_id
    WHERE p.last_heartbeat > now() - make_interval(secs => :stale_s)
"""
_IS_ALIVE = text(f"SELECT 1 FROM ({_ALIVE}) alive WHERE name = :name")
_REASSIGN = text(
    "UPDATE procrastinate_jobs SET queue_name = :shared WHERE status = 'todo' AND queue_name LIKE :prefix "
    f"AND substr(queue_name, :start) NOT IN ({_ALIVE})"
)


async def defer(session: AsyncSession, *, task: str, queue: str, kind: str, run_id: str) -> int:
    """Enqueue `task` for the run (args: its id only); committed with the caller's transaction. Returns the job id."""
    params = {"queue": queue, "task": task, "lock": run_lock(kind, run_id), "args": json.dumps({"run_id": run_id})}
    return int((await session.execute(_DEFER, params)).scalar_one())


async def abort(session: AsyncSession, *, kind: str, run_id: str) -> str | None:
    """Abort the run's job: a waiting one is cancelled (returns "todo": nobody will run it), a running one is
    told to abort (returns "doing": its worker hears it over NOTIFY at once); None when there is no such job."""
    row = (await session.execute(_ABORT, {"lock": run_lock(kind, run_id)})).first()
    return None if row is None else str(row[1])


async def worker_alive(session: AsyncSession, *, name: str, stale_s: float) -> bool:
    """Whether the worker `name` still beats (its Procrastinate worker row is fresher than `stale_s`)."""
    return (await session.execute(_IS_ALIVE, {"name": name, "stale_s": stale_s})).first() is not None


async def reassign_orphans(session: AsyncSession, *, stale_s: float) -> int:
    """Waiting turns in the queue of a worker that stopped beating go to the shared queue; returns how many."""
    params = {"shared": TURNS_QUEUE, "prefix": f"{WORKER_QUEUE_PREFIX}%", "start": len(WORKER_QUEUE_PREFIX) + 1}
    result: Any = await session.execute(_REASSIGN, {**params, "stale_s": stale_s})
    return int(result.rowcount or 0)


_PRUNE = text(
    "DELETE FROM queue_workers w WHERE w.started_at < now() - make_interval(secs => :stale_s) AND NOT EXISTS "
    "(SELECT 1 FROM procrastinate_workers p WHERE p.id = w.queue_worker_id)"
)


async def prune_workers(session: AsyncSession, *, stale_s: float) -> int:
    """Forget workers Procrastinate itself pruned (gone without stopping: killed, lost); returns how many."""
    result: Any = await session.execute(_PRUNE, {"stale_s": stale_s})
    return int(result.rowcount or 0)


@dataclass(frozen=True)
class WorkerSlots:
    name: str
    alive: bool
    turn_slots: int
    turns_running: int
    optimization_slots: int
    optimizations_running: int
    last_heartbeat: str | None


@dataclass(frozen=True)
class QueueHealth:
    depth: dict[str, int]  # waiting jobs per queue
    running: int
    stalled: int  # running jobs whose worker stopped beating (or has none)
    workers: list[WorkerSlots]


_DEPTH = text("SELECT queue_name, count(*) FROM procrastinate_jobs WHERE status = 'todo' GROUP BY queue_name")
_RUNNING = text(
    "SELECT count(*) FILTER (WHERE true), count(*) FILTER (WHERE j.worker_id IS NULL OR p.id IS NULL "
    "OR p.last_heartbeat < now() - make_interval(secs => :stale_s)) FROM procrastinate_jobs j "
    "LEFT JOIN procrastinate_workers p ON p.id = j.worker_id WHERE j.status = 'doing'"
)
_WORKERS = text(
    "SELECT w.name, p.last_heartbeat, p.last_heartbeat > now() - make_interval(secs => :stale_s), w.turn_slots, "
    "w.optimization_slots, (SELECT count(*) FROM procrastinate_jobs j WHERE j.status = 'doing' AND j.worker_id = "
    "w.queue_worker_id), (SELECT count(*) FROM procrastinate_jobs j WHERE j.status = 'doing' AND j.worker_id = "
    "w.optimization_worker_id) FROM queue_workers w LEFT JOIN procrastinate_workers p ON p.id = w.queue_worker_id "
    "ORDER BY w.name"
)


async def health(session: AsyncSession, *, stale_s: float) -> QueueHealth:
    """What an operator watches: queue depth, stalled jobs and every worker's slots."""
    depth = {str(name): int(count) for name, count in await session.execute(_DEPTH)}
    running, stalled = (await session.execute(_RUNNING, {"stale_s": stale_s})).one()
    workers = [
        WorkerSlots(
            name=str(row[0]),
            alive=bool(row[2]),
            turn_slots=int(row[3]),
            turns_running=int(row[5]),
            optimization_slots=int(row[4]),
            optimizations_running=int(row[6]),
            last_heartbeat=row[1].isoformat() if row[1] is not None else None,
        )
        for row in await session.execute(_WORKERS, {"stale_s": stale_s})
    ]
    return QueueHealth(depth=depth, running=int(running), stalled=int(stalled), workers=workers)
