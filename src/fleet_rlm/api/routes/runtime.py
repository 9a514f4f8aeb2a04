"""Runtime: your turn settings (overrides of the server's), the status of what serves your turns, and
on-demand checks of your root model and of Daytona."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request

from fleet_rlm.api.auth import AdminUserDep, CurrentUserDep
from fleet_rlm.api.deps import DatabaseDep, SettingsDep, TxDep, live_pool, live_runtime
from fleet_rlm.config import Settings
from fleet_rlm.llm import LMCheckResult, check_lm
from fleet_rlm.schemas.runtime import (
    DaytonaTestResult,
    RuntimeSettingsOut,
    RuntimeSettingsPatch,
    RuntimeStatus,
    RuntimeValues,
    SandboxStatus,
    TracingStatus,
)
from fleet_rlm.services.lms import load_config, resolve_for_user
from fleet_rlm.services.preferences import apply, load_overrides, server_values, update_overrides
from fleet_rlm.services.sandbox_leases import user_sandboxes
from fleet_rlm.services.status import (
    database_status,
    daytona_status,
    queue_status,
    root_model_status,
    run_daytona_smoke,
    sandbox_summary,
)
from fleet_rlm.store.repos import runs as runs_repo

router = APIRouter(prefix="/api/v1/runtime", tags=["runtime"])
SERVER_ONLY = (
    "sandbox_backend",
    "sandbox_cell_timeout_s",
    "sandbox_memory_mb",
    "sandbox_output_max_chars",
    "rlm_context_threshold_chars",
    "context_max_chars",
)


def settings_out(settings: Settings, overrides: dict[str, object]) -> RuntimeSettingsOut:
    return RuntimeSettingsOut(
        effective=RuntimeValues.model_validate(server_values(apply(settings, overrides))),
        overrides=overrides,
        defaults=RuntimeValues.model_validate(server_values(settings)),
        server={key: getattr(settings, key) for key in SERVER_ONLY},
    )


@router.get("/settings", operation_id="getRuntimeSettings", response_model=RuntimeSettingsOut)
async def get_runtime_settings(user: CurrentUserDep, s: TxDep, settings: SettingsDep) -> RuntimeSettingsOut:
    """What your new turns start from: your overrides over the server's settings."""
    overrides = await load_overrides(s, user_id=user.user_id)
    return settings_out(settings, overrides)


@router.patch("/settings", operation_id="updateRuntimeSettings", response_model=RuntimeSettingsOut)
async def update_runtime_settings(
    user: CurrentUserDep, s: TxDep, settings: SettingsDep, body: RuntimeSettingsPatch
) -> RuntimeSettingsOut:
    """Change the fields present; null returns a field to the server default. Applies to turns started later."""
    overrides = await update_overrides(s, user_id=user.user_id, changes=body.model_dump(exclude_unset=True))
    return settings_out(settings, overrides)


@router.get("/status", operation_id="getRuntimeStatus", response_model=RuntimeStatus)
async def get_runtime_status(
    request: Request, user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep
) -> RuntimeStatus:
    """Database, sandbox backend and pool, Daytona, your root model and your active turns; with queue execution,
    the job queue: its depth, stalled jobs and every worker's slots."""
    pool = live_pool(request)
    telemetry = getattr(request.app.state, "telemetry", None)
    async with database.session() as s:
        config = await load_config(s, user_id=user.user_id)
        active = await runs_repo.list_active_runs(s, user_id=user.user_id)
        sandboxes = await user_sandboxes(pool, s, user_id=user.user_id, backend=settings.sandbox_backend)
    sandbox = SandboxStatus(
        **sandbox_summary(settings),
        pool=await asyncio.to_thread(pool.stats) if pool is not None else None,
        live_sandboxes=len(sandboxes),
    )
    return RuntimeStatus(
        database=await database_status(database, settings),
        sandbox=sandbox,
        daytona=await daytona_status(settings),
        root_model=root_model_status(settings, config),
        active_runs=len(active),
        turn_workers=getattr(live_runtime(request), "processes", 0),  # ProcessRuntime's; 0 for threads
        tracing=TracingStatus.model_validate(telemetry.status()) if telemetry else TracingStatus(enabled=False),
        execution=settings.execution,
        queue=await queue_status(database, settings),
    )


@router.post(
    "/tests/lm",
    operation_id="testRootLm",
    response_model=LMCheckResult,
    responses={409: {"description": "No model is configured for the root role."}},
)
async def test_root_lm(user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep) -> LMCheckResult:
    """One tiny completion with the profile your root role resolves to (failures come back as data)."""
    async with database.session() as s:
        config = await load_config(s, user_id=user.user_id)
    profile = resolve_for_user(settings, config)["root"]
    return await asyncio.to_thread(check_lm, profile, settings)


@router.post(
    "/tests/daytona",
    operation_id="testDaytona",
    response_model=DaytonaTestResult,
    responses={403: {"description": "admin_required: the check uses the server's Daytona account."}},
)
async def test_daytona(user: AdminUserDep, settings: SettingsDep) -> DaytonaTestResult:
    """Admins: the Daytona smoke check, step by step (each failed step carries its action). It creates and
    deletes a sandbox on the server's Daytona account, so it is an operator action."""
    return await run_daytona_smoke(settings)
