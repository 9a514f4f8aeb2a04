"""What /runtime/status and /runtime/tests report: database, sandbox, Daytona, the caller's root model.

Every check reports instead of raising, so one broken dependency never hides the others.
"""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from typing import Any

import httpx

from fleet_rlm import sandbox as sandbox_pkg
from fleet_rlm.config import Settings
from fleet_rlm.schemas.runtime import (
    DatabaseStatus,
    DaytonaStatus,
    DaytonaTestResult,
    QueueStatus,
    QueueWorkerStatus,
    RootModelStatus,
    SmokeStep,
)
from fleet_rlm.services.lms import UserLMConfig, explain_roles
from fleet_rlm.services.sandbox_status import sandbox_readiness
from fleet_rlm.store import Database

DAYTONA_PROBE_TIMEOUT_S = 3.0
SMOKE_MODULE = "fleet_rlm.sandbox.daytona.smoke"
DAYTONA_ACTION = "set DAYTONA_API_KEY and DAYTONA_API_URL"


async def database_status(database: Database, settings: Settings) -> DatabaseStatus:
    check = await database.check()
    return DatabaseStatus(
        kind=settings.database_kind,
        reachable=bool(check.get("reachable")),
        revision=check.get("current"),
        head=str(check.get("head")),
        at_head=bool(check.get("at_head")),
        error=check.get("error"),
    )


async def queue_status(database: Database, settings: Settings) -> QueueStatus | None:
    """Queue depth, stalled jobs and every worker's slots (queue execution); None when turns run inline."""
    if settings.execution != "queue":
        return None
    from fleet_rlm.services.queue.jobs import health

    try:
        async with database.session() as session:
            found = await health(session, stale_s=settings.run_stale_after_s)
    except Exception as exc:  # reported, never raised: one broken dependency must not hide the others
        return QueueStatus(reachable=False, error=str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__)
    workers = [QueueWorkerStatus(**vars(worker)) for worker in found.workers]
    return QueueStatus(reachable=True, depth=found.depth, running=found.running, stalled=found.stalled, workers=workers)


def sandbox_summary(settings: Settings) -> dict[str, Any]:
    status = sandbox_readiness(settings)
    return {
        "backend": settings.sandbox_backend,
        "isolation": str(status.get("isolation", "unknown")),
        "usable": bool(status.get("usable")),
        "reason": status.get("reason"),
    }


def daytona_configured(settings: Settings) -> bool:
    return bool(settings.daytona_api_key and settings.daytona_api_url)


async def daytona_status(settings: Settings) -> DaytonaStatus:
    """Configured from settings; reachable when the API URL answers any HTTP response within a few seconds."""
    url = settings.daytona_api_url
    if not daytona_configured(settings) or not url:
        return DaytonaStatus(configured=False, api_url=url, reachable=None, detail=DAYTONA_ACTION)
    try:
        async with httpx.AsyncClient(timeout=DAYTONA_PROBE_TIMEOUT_S) as client:
            response = await client.get(url)
    except httpx.HTTPError as exc:
        return DaytonaStatus(configured=True, api_url=url, reachable=False, detail=f"{type(exc).__name__}: {exc}")
    return DaytonaStatus(configured=True, api_url=url, reachable=True, detail=f"answered HTTP {response.status_code}")


def root_model_status(settings: Settings, config: UserLMConfig) -> RootModelStatus:
    root = explain_roles(settings, config)[0]
    if root.effective is None:
        problem = root.problem.message if root.problem else "not configured"
        return RootModelStatus(configured=False, profile_name=None, model=None, source=None, problem=problem)
    found = root.effective
    return RootModelStatus(
        configured=True, profile_name=found.profile_name, model=found.model, source=found.source, problem=None
    )


def smoke_available() -> bool:
    """Whether the smoke module ships with this install, without importing the Daytona SDK (slow)."""
    return (Path(sandbox_pkg.__file__).parent / "daytona" / "smoke.py").is_file()


async def run_daytona_smoke(settings: Settings) -> DaytonaTestResult:
    """The Daytona smoke check (create a sandbox, run code, use the volume, delete it) in a worker thread."""
    configured = daytona_configured(settings)
    if not smoke_available():
        return DaytonaTestResult(
            available=False, configured=configured, ok=False, steps=[], message="this server has no Daytona check"
        )
    if not configured:  # checked before importing the Daytona SDK (slow to import)
        return DaytonaTestResult(
            available=True, configured=False, ok=False, steps=[], message=f"Daytona is not configured: {DAYTONA_ACTION}"
        )
    smoke = importlib.import_module(SMOKE_MODULE)
    results = await asyncio.to_thread(smoke.run_smoke, settings)
    steps = [SmokeStep(name=r.name, ok=r.ok, detail=r.detail, action=r.action) for r in results]
    ok = bool(steps) and all(step.ok for step in steps)
    failed = next((step for step in steps if not step.ok), None)
    message = "every step passed" if ok else f"step '{failed.name}' failed" if failed else "no steps ran"
    return DaytonaTestResult(available=True, configured=True, ok=ok, steps=steps, message=message)
