"""Bring the turn machinery up and down with a server: bus, sandbox pool, runtime (with the DB-backed program
registry of promoted versions), turn and optimization services, crash recovery (one job sweeper for both).
HTTP-free: the API's lifespan (and any other surface) enters `turn_machinery` and keeps the `Machinery` it yields."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fleet_rlm.config import Settings
from fleet_rlm.optimize.programs_db import DatabasePrograms
from fleet_rlm.runtime.contracts import Runtime
from fleet_rlm.runtime.programs import ProgramRegistry
from fleet_rlm.runtime.warm import warm_in_background
from fleet_rlm.services.jobs.sweep import JobKind, sweep, sweep_forever
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.services.optimization import make_optimization, make_programs
from fleet_rlm.services.optimization_runs import OptimizationService
from fleet_rlm.services.turns.recovery import TurnJobs
from fleet_rlm.services.turns.service import TurnService
from fleet_rlm.store import Database
from fleet_rlm.telemetry.links import tracing_enabled

if TYPE_CHECKING:
    from fleet_rlm.telemetry.setup import Telemetry


def make_bus(settings: Settings) -> LocalBus:
    if settings.database_kind == "postgresql":
        from fleet_rlm.services.live.pg_bus import PostgresBus

        return PostgresBus(settings.resolved_database_url)
    return LocalBus()


@dataclass(frozen=True)
class Machinery:
    """What a running server holds for turns and optimization runs."""

    bus: LocalBus
    programs: DatabasePrograms
    runtime: Runtime
    turns: TurnService
    optimization: OptimizationService
    telemetry: Telemetry | None = None


def make_telemetry(settings: Settings) -> Telemetry | None:
    """The app's trace export, or None when tracing is off (then the OpenTelemetry SDK is never imported)."""
    if not tracing_enabled(settings):
        return None
    from fleet_rlm.telemetry.setup import Telemetry

    return Telemetry.from_settings(settings)


MAX_AUTO_TURN_PROCESSES = 8  # turn workers when FLEET_TURN_PROCESSES is unset: one per core, at most this many


def turn_worker_count(settings: Settings) -> int:
    """How many worker processes run turns (0: threads of the API process)."""
    if settings.turn_processes is not None:
        return settings.turn_processes
    return max(1, min(os.cpu_count() or 1, MAX_AUTO_TURN_PROCESSES))


def make_runtime(settings: Settings, programs: ProgramRegistry | None = None) -> Runtime:
    """Turns in worker processes (one per core unless `FLEET_TURN_PROCESSES` says otherwise), or with 0 in threads
    of this process (docs/performance.md)."""
    processes = turn_worker_count(settings)
    if processes > 0:
        from fleet_rlm.runtime.process import ProcessRuntime

        return ProcessRuntime(settings, processes=processes, programs=programs, loop=asyncio.get_running_loop())
    from fleet_rlm.runtime.turn import TurnRuntime

    return TurnRuntime(settings, programs=programs)


def warm(runtime: Runtime) -> None:
    """Off the startup path: turn workers start (and import), or this process imports what its turns need."""
    start = getattr(runtime, "start_workers", None)
    if callable(start):
        threading.Thread(target=start, name="start-turn-workers", daemon=True).start()
    else:
        warm_in_background()


@asynccontextmanager
async def turn_machinery(
    settings: Settings, database: Database, runtime: Runtime | None = None, *, worker: bool = False
) -> AsyncIterator[Machinery]:
    """Start everything turns need; `runtime` replaces the real TurnRuntime (tests, scripted demos). An API server
    with queue execution runs no turns (`fleet-rlm worker`s do, `worker=True`): its runtime is never warmed and
    only answers what the API asks of sandboxes in this process."""
    bus = make_bus(settings)
    await bus.start()
    programs = await make_programs(database)  # promoted optimized programs, used by new turns
    executes = worker or settings.execution == "inline"
    if runtime is None:
        runtime = make_runtime(settings if executes else settings.model_copy(update={"turn_processes": 0}), programs)
    if executes:  # warm after startup completes, so the imports do not compete with it for the GIL
        asyncio.get_running_loop().call_later(1.0, warm, runtime)
    telemetry = make_telemetry(settings)
    service = TurnService(settings, database, bus, runtime, telemetry=telemetry)
    optimization = make_optimization(settings, database, bus, programs, owner=service.owner)
    # one sweeper for every kind of job: dead-owner or stale runs become interrupted, at startup and periodically
    turn_jobs = TurnJobs(database, bus, active=service.tokens)
    if executes:  # orphaned runs continue in a process that runs turns (an API server on the queue interrupts them)
        turn_jobs.resume, turn_jobs.why_not = service.resume, service.not_resumable
    kinds: list[JobKind] = [turn_jobs, optimization.jobs]
    owner, stale_after_s, queue = service.owner, settings.run_stale_after_s, settings.execution == "queue"
    await sweep(database, kinds, current_owner=owner, stale_after_s=stale_after_s, queue=queue)
    sweeper = asyncio.get_running_loop().create_task(
        sweep_forever(database, kinds, current_owner=owner, stale_after_s=stale_after_s, queue=queue)
    )
    try:
        yield Machinery(bus, programs, runtime, service, optimization, telemetry)
    finally:
        sweeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeper
        await optimization.shutdown()
        await service.shutdown()
        await asyncio.to_thread(runtime.shutdown)
        await bus.stop()
        if telemetry is not None:
            await asyncio.to_thread(telemetry.shutdown)
