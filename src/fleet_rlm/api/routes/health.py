"""Liveness, readiness and the truthful summary of what this server is configured with."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from fleet_rlm import __version__
from fleet_rlm.api.deps import DatabaseDep, SettingsDep
from fleet_rlm.config import Settings
from fleet_rlm.services.sandbox_status import sandbox_readiness

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str


class Check(BaseModel):
    ok: bool
    detail: str
    info: dict[str, Any] = {}


class Readiness(BaseModel):
    status: Literal["ready", "not_ready"]
    checks: dict[str, Check]


class ModelInfo(BaseModel):
    configured: bool
    root: str | None
    delegate: str | None


class Info(BaseModel):
    name: Literal["fleet-rlm"] = "fleet-rlm"
    version: str
    database: Literal["sqlite", "postgresql"]
    sandbox_backend: str
    isolation: str
    auth_mode: str
    model: ModelInfo
    default_mode: str
    upload_max_bytes: int = Field(description="Largest file accepted, as an attachment or a volume upload.")


@router.get("/health", operation_id="getHealth", response_model=Health)
async def get_health() -> Health:
    """Liveness: the process answers. Says nothing about dependencies (see /ready)."""
    return Health(version=__version__)


@router.get(
    "/ready",
    operation_id="getReadiness",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "A dependency is not ready."}},
)
async def get_ready(settings: SettingsDep, database: DatabaseDep) -> JSONResponse:
    """Readiness: the database is reachable and at the schema head, and the sandbox backend is usable."""
    db = await database.check()
    db_ok = bool(db.get("reachable") and db.get("at_head"))
    if not db.get("reachable"):
        db_detail = f"unreachable: {db.get('error', 'unknown error')}"
    elif not db.get("at_head"):
        db_detail = f"schema at {db.get('current') or 'empty'}, needs {db.get('head')}: run `fleet-rlm db upgrade`"
    else:
        db_detail = f"{settings.database_kind} at head {db.get('head')}"
    sandbox = _sandbox_check(settings)
    checks = {"database": Check(ok=db_ok, detail=db_detail, info=_public(db)), "sandbox": sandbox}
    ready = all(check.ok for check in checks.values())
    body = Readiness(status="ready" if ready else "not_ready", checks=checks)
    return JSONResponse(body.model_dump(), status_code=200 if ready else 503)


@router.get("/api/v1/info", operation_id="getInfo", response_model=Info, tags=["info"])
async def get_info(settings: SettingsDep) -> Info:
    """What is configured: version, database kind, sandbox backend and isolation, auth mode, models."""
    status = sandbox_readiness(settings)
    return Info(
        version=__version__,
        database=settings.database_kind,
        sandbox_backend=settings.sandbox_backend,
        isolation=str(status.get("isolation", "unknown")),
        auth_mode=settings.auth_mode,
        model=ModelInfo(
            configured=settings.model_configured,
            root=settings.lm_model,
            delegate=settings.delegate_lm_model or settings.lm_model,
        ),
        default_mode=settings.default_mode,
        upload_max_bytes=settings.upload_max_bytes,
    )


def _sandbox_check(settings: Settings) -> Check:
    status = sandbox_readiness(settings)
    usable = bool(status.get("usable"))
    detail = f"{status.get('backend')}, isolation: {status.get('isolation')}"
    if status.get("reason"):
        detail += f" ({status['reason']})"
    return Check(ok=usable, detail=detail, info=_public(status))


def _public(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if isinstance(value, str | int | float | bool | None)}
