"""`create_app(settings, runtime=...)`: the FastAPI application. Nothing is built at import time."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

# dspy before the web stack: its probes for missing optional packages (`require()` -> `inspect.stack()`) cost in
# proportion to the modules already loaded; imported after FastAPI, SQLAlchemy and MCP it takes ~3 s more CPU.
import dspy  # noqa: F401
from fastapi import FastAPI

from fleet_rlm import __version__
from fleet_rlm.api import spa, startup_gc
from fleet_rlm.api.browser_guard import BrowserGuard
from fleet_rlm.api.errors import install_error_handlers
from fleet_rlm.api.limits import BodyLimitMiddleware
from fleet_rlm.api.mcp_mount import MCP_PATH, McpMount
from fleet_rlm.api.routes import (
    artifacts,
    attachments,
    auth,
    health,
    mcp_servers,
    optimization_status,
    profiles,
    replay,
    roles,
    runs,
    sandboxes,
    sessions,
    skills,
    traces,
    turns,
    volume,
)
from fleet_rlm.api.routes import optimization as optimization_routes
from fleet_rlm.api.routes import runtime as runtime_routes
from fleet_rlm.api.ws import events as ws_events
from fleet_rlm.api.ws import execution as ws_execution
from fleet_rlm.config import Settings, load_settings
from fleet_rlm.runtime.contracts import Runtime
from fleet_rlm.services.startup import prepare_data_dir, prepare_database
from fleet_rlm.services.turns.lifecycle import turn_machinery


def create_app(settings: Settings | None = None, *, runtime: Runtime | None = None, **overrides: Any) -> FastAPI:
    """Build the app. `overrides` replace settings fields (tests and the CLI use them); `runtime` replaces the
    real turn runtime (a scripted one in tests and demos)."""
    if settings is None:
        settings = load_settings(**overrides)
    elif overrides:
        settings = settings.model_copy(update=overrides)
    mcp = McpMount()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        prepare_data_dir(settings)
        database = await prepare_database(settings)
        app.state.database = database
        try:
            async with turn_machinery(settings, database, runtime) as machinery, mcp.run():
                app.state.programs = machinery.programs
                app.state.turns = machinery.turns
                app.state.optimization = machinery.optimization
                app.state.telemetry = machinery.telemetry
                startup_gc.resume()  # the process's entry point may have paused it for the imports and startup
                yield
        finally:
            await database.dispose()

    app = FastAPI(
        title="fleet-rlm",
        version=__version__,
        summary="A persistent, recursive DSPy workbench.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    install_error_handlers(app)
    app.add_middleware(BodyLimitMiddleware, settings=settings)
    app.add_middleware(BrowserGuard, settings=settings)  # added last = outermost: refuses before any body is read
    app.include_router(health.router)
    for module in (auth, sessions, runs, attachments, artifacts, volume, traces):
        app.include_router(module.router)
    app.include_router(turns.router)
    for module in (profiles, roles, runtime_routes, sandboxes, skills, optimization_status, replay, mcp_servers):
        app.include_router(module.router)
    app.include_router(optimization_routes.router)
    app.include_router(ws_execution.router)
    app.include_router(ws_events.router)
    # MCP over streamable HTTP: an ASGI app as the endpoint, which Starlette serves as is
    app.add_route(MCP_PATH, mcp, methods=["GET", "POST", "DELETE"], include_in_schema=False)  # type: ignore[arg-type]
    app.include_router(spa.router)  # last: the web UI's catch-all /app/* must never shadow an API route
    return app
