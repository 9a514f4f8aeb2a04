"""`fleet-rlm worker`: a process with no HTTP that runs turns and optimization runs from the job queue.

It brings up the same turn machinery a server does (bus with NOTIFY, process pool and sandbox pool, event writer,
optimization service; `turn_machinery(worker=True)`) and two Procrastinate workers over one app: one takes
turns (the shared `turns` queue and this worker's own `turns@<name>`, where the next turns of sessions whose REPL
it holds go) with `turn_slots` at once, the other optimization runs with their own `optimization_slots`. Events
reach clients on any API replica through the database and NOTIFY. It registers itself in `queue_workers` (slots,
and the Procrastinate worker whose heartbeat says it is alive) and, every few seconds, hands the waiting turns
of workers that stopped beating to the shared queue (and forgets workers the queue pruned). SIGTERM/SIGINT stop
it gracefully: running turns get `shutdown_grace_s`, then are recorded interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable
from typing import Any

from procrastinate.worker import Worker
from sqlalchemy import delete, update

from fleet_rlm.config import Settings
from fleet_rlm.services.queue import jobs
from fleet_rlm.services.queue.app import make_app
from fleet_rlm.services.queue.names import OPTIMIZATIONS_QUEUE, TURNS_QUEUE, worker_queue
from fleet_rlm.services.startup import prepare_database
from fleet_rlm.services.turns.lifecycle import turn_machinery
from fleet_rlm.store import Database
from fleet_rlm.store.models import QueueWorker

log = logging.getLogger(__name__)


async def serve_worker(
    settings: Settings,
    *,
    turn_slots: int,
    optimization_slots: int = 1,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Run until SIGTERM/SIGINT; `ready(name)` is called once both queue workers are registered."""
    settings = settings.model_copy(update={"execution": "queue"})
    database = await prepare_database(settings)  # Postgres only, at head, with the queue's schema
    try:
        async with turn_machinery(settings, database, worker=True) as machinery:
            name = machinery.turns.owner
            app = make_app(settings.resolved_database_url, machinery.turns, machinery.optimization)
            async with app.open_async():
                common: dict[str, Any] = {
                    "install_signal_handlers": False,
                    "update_heartbeat_interval": settings.run_heartbeat_s,
                    "stalled_worker_timeout": settings.run_stale_after_s,
                    "shutdown_graceful_timeout": settings.shutdown_grace_s,
                    "fetch_job_polling_interval": 2.0,
                    "abort_job_polling_interval": 2.0,  # a lost abort NOTIFY is picked up this late
                }
                turns = Worker(
                    app, queues=[TURNS_QUEUE, worker_queue(name)], name=name, concurrency=turn_slots, **common
                )
                optimizations = Worker(
                    app, queues=[OPTIMIZATIONS_QUEUE], name=f"{name}/opt", concurrency=optimization_slots, **common
                )
                await _run(database, settings, name, turns, optimizations, turn_slots, optimization_slots, ready)
    finally:
        await database.dispose()


async def _run(
    database: Database,
    settings: Settings,
    name: str,
    turns: Worker,
    optimizations: Worker,
    turn_slots: int,
    optimization_slots: int,
    ready: Callable[[str], None] | None,
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with database.transaction() as session:
        session.add(QueueWorker(name=name, turn_slots=turn_slots, optimization_slots=optimization_slots))
    runs = [loop.create_task(turns.run(), name="turn-worker"), loop.create_task(optimizations.run(), name="opt-worker")]
    try:
        while turns.worker_id is None or optimizations.worker_id is None:  # registered with Procrastinate
            await _first(stop.wait, lambda: asyncio.wait(runs, return_when=asyncio.FIRST_COMPLETED), timeout=0.05)
            if stop.is_set() or any(task.done() for task in runs):
                break
        async with database.transaction() as session:
            await session.execute(
                update(QueueWorker)
                .where(QueueWorker.name == name)  # type: ignore[arg-type]
                .values(queue_worker_id=turns.worker_id, optimization_worker_id=optimizations.worker_id)
            )
        if ready is not None:
            ready(name)
        log.info("worker %s takes turns (%d slots) and optimization runs (%d)", name, turn_slots, optimization_slots)
        while not stop.is_set() and not any(task.done() for task in runs):
            with contextlib.suppress(Exception):
                async with database.transaction() as session:
                    moved = await jobs.reassign_orphans(session, stale_s=settings.run_stale_after_s)
                    await jobs.prune_workers(session, stale_s=settings.run_stale_after_s)
                if moved:
                    log.warning("%d waiting turn(s) of stopped workers moved to the shared queue", moved)
            await _first(stop.wait, lambda: asyncio.wait(runs), timeout=max(1.0, settings.run_heartbeat_s))
    finally:
        turns.stop()
        optimizations.stop()
        await asyncio.gather(*runs, return_exceptions=True)
        async with database.transaction() as session:
            await session.execute(delete(QueueWorker).where(QueueWorker.name == name))  # type: ignore[arg-type]


async def _first(*waits: Callable[[], Awaitable[object]], timeout: float) -> None:
    """Wait for the first of `waits` to finish, at most `timeout` seconds."""
    tasks = [asyncio.ensure_future(wait()) for wait in waits]
    try:
        await asyncio.wait(tasks, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
