"""Bring the turn machinery up and down with the app: bus, sandbox pool, runtime (with the DB-backed program
registry of promoted versions), turn and optimization services, crash recovery."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from fleet_rlm.api.live.bus import LocalBus
from fleet_rlm.api.optimization_service import make_optimization, make_programs
from fleet_rlm.api.turns.recovery import recover_orphaned_runs, sweep_forever
from fleet_rlm.api.turns.service import TurnService
from fleet_rlm.config import Settings
from fleet_rlm.runtime.programs import ProgramRegistry
from fleet_rlm.store import Database


def make_bus(settings: Settings) -> LocalBus:
    if settings.database_kind == "postgresql":
        from fleet_rlm.api.live.pg_bus import PostgresBus

        return PostgresBus(settings.resolved_database_url)
    return LocalBus()


def warm_imports() -> None:
    """Import the heavy model libraries off the request path, so the first turn does not pay for them."""
    try:
        import litellm  # noqa: F401

        from fleet_rlm.llm import pricing  # noqa: F401
    except Exception:  # warming is an optimisation; the first turn will import (and report) for real
        return


def make_runtime(settings: Settings, programs: ProgramRegistry | None = None) -> object:
    from fleet_rlm.runtime.runner import TurnRuntime

    return TurnRuntime(settings, programs=programs)


@asynccontextmanager
async def turn_machinery(app: FastAPI, settings: Settings, database: Database) -> AsyncIterator[TurnService]:
    # Warm after startup completes, so the imports do not compete with it for the GIL.
    asyncio.get_running_loop().call_later(
        1.0, lambda: threading.Thread(target=warm_imports, name="warm-imports", daemon=True).start()
    )
    bus = make_bus(settings)
    await bus.start()
    programs = await make_programs(database)  # promoted optimized programs, used by new turns
    app.state.programs = programs
    overridden = hasattr(app.state, "runtime_override")
    runtime = app.state.runtime_override if overridden else make_runtime(settings, programs)
    service = TurnService(settings, database, bus, runtime)
    app.state.turns = service
    optimization = make_optimization(settings, database, programs)
    app.state.optimization = optimization
    await optimization.recover()
    await recover_orphaned_runs(database, bus, settings, current_owner=service.owner, active=service.tokens)
    sweeper = asyncio.get_running_loop().create_task(
        sweep_forever(database, bus, settings, current_owner=service.owner, active=service.tokens)
    )
    try:
        yield service
    finally:
        sweeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeper
        await optimization.shutdown()
        await service.shutdown()
        shutdown = getattr(runtime, "shutdown", None)
        if callable(shutdown):
            await asyncio.to_thread(shutdown)
        await bus.stop()
