"""Dependency aliases shared by routes (`Annotated` types, so signatures stay short and uniform), and the
services a running app holds (set by the lifespan in `fleet_rlm.api.app`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.api.auth import CurrentUserDep, TicketUserDep
from fleet_rlm.config import Settings
from fleet_rlm.errors import Unavailable
from fleet_rlm.runtime.contracts import LiveSandboxes
from fleet_rlm.services.optimization_runs import OptimizationService
from fleet_rlm.services.turns.service import TurnService
from fleet_rlm.store import Database


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_database(request: Request) -> Database:
    database: Database = request.app.state.database
    return database


async def read_session(request: Request) -> AsyncIterator[AsyncSession]:
    """A read-only database session for the request (no commit)."""
    async with get_database(request).session() as s:
        yield s


async def write_transaction(request: Request) -> AsyncIterator[AsyncSession]:
    """One transaction for the request: committed when the route returns, rolled back when it raises."""
    async with get_database(request).transaction() as s:
        yield s


def turn_service(request: Request) -> TurnService:
    service: TurnService = request.app.state.turns
    return service


def optimization_service(request: Request) -> OptimizationService:
    service: OptimizationService | None = getattr(request.app.state, "optimization", None)
    if service is None:
        raise Unavailable(
            "the optimization service is not running",
            code="optimization_unavailable",
            action="restart the server; check its log for startup errors",
        )
    return service


def live_runtime(request: Request) -> Any:
    """The turn service's runtime (a TurnRuntime, a ProcessRuntime, or a scripted one), if the app has one."""
    return getattr(getattr(request.app.state, "turns", None), "runtime", None)


def live_pool(request: Request) -> LiveSandboxes | None:
    """The runtime's warm sandboxes (its pool, or its turn workers' pools), when it has any (a scripted test
    runtime may not)."""
    pool = getattr(live_runtime(request), "pool", None)
    has_all = all(callable(getattr(pool, name, None)) for name in ("leases", "stats", "end_session"))
    return pool if pool is not None and has_all else None


SettingsDep = Annotated[Settings, Depends(get_settings)]
DatabaseDep = Annotated[Database, Depends(get_database)]
# scope="function": the transaction commits when the route returns, before the response is sent, so a failed
# commit is the client's error response and never a success that did not persist.
ReadDep = Annotated[AsyncSession, Depends(read_session, scope="function")]
TxDep = Annotated[AsyncSession, Depends(write_transaction, scope="function")]
TurnsDep = Annotated[TurnService, Depends(turn_service)]
OptimizationDep = Annotated[OptimizationService, Depends(optimization_service)]

__all__ = [
    "CurrentUserDep",
    "DatabaseDep",
    "OptimizationDep",
    "ReadDep",
    "SettingsDep",
    "TicketUserDep",
    "TurnsDep",
    "TxDep",
    "get_database",
    "get_settings",
    "live_pool",
    "live_runtime",
    "optimization_service",
    "turn_service",
]
