"""Replay a recorded run offline (identical, or the first divergence) and keep regression sets of runs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.api.deps import DatabaseDep, SettingsDep, turn_service
from fleet_rlm.errors import NotFound
from fleet_rlm.schemas.replay import (
    SET_NAME,
    RecordingOut,
    ReplayIn,
    ReplayReportOut,
    ReplaySetIn,
    ReplaySetList,
    ReplaySetOut,
    ReplaySetReportOut,
)
from fleet_rlm.services import replay as service
from fleet_rlm.store.repos import recordings as recordings_repo

router = APIRouter(prefix="/api/v1", tags=["replay"])
SetName = Annotated[str, Path(pattern=SET_NAME, description="Letters, digits, '.', '_' or '-'.")]


def _args(request: Request, database: DatabaseDep, settings: SettingsDep) -> dict[str, Any]:
    turns = turn_service(request)
    return {"database": database, "runtime": turns.runtime, "settings": settings, "executor": turns.threads}


@router.post("/runs/{run_id}/replay", operation_id="replayRun", response_model=ReplayReportOut)
async def replay_run(
    run_id: str,
    request: Request,
    user: CurrentUserDep,
    database: DatabaseDep,
    settings: SettingsDep,
    data: ReplayIn | None = None,
) -> ReplayReportOut:
    """Re-execute the run against its recorded LM responses (no model is called); report identical or the
    first divergent request. Synchronous: answers when the replay has finished."""
    version = data.program_version if data else None
    report = await service.replay_run(
        user_id=user.user_id,
        workspace_dir=user.workspace_root,
        run_id=run_id,
        program_version=version,
        **_args(request, database, settings),
    )
    return ReplayReportOut.model_validate(report.to_dict())


@router.get("/runs/{run_id}/recording", operation_id="getRunRecording", response_model=RecordingOut)
async def get_recording(
    run_id: str,
    user: CurrentUserDep,
    database: DatabaseDep,
    bodies: Annotated[bool, Query(description="Include each request and response body.")] = False,
) -> RecordingOut:
    """The run's recorded LM exchanges in call order (no key or auth header is ever part of them)."""
    recording = await service.recording_of(database, user_id=user.user_id, run_id=run_id, bodies=bodies)
    return RecordingOut.model_validate(recording)


@router.get("/replay-sets", operation_id="listReplaySets", response_model=ReplaySetList)
async def list_sets(user: CurrentUserDep, database: DatabaseDep) -> ReplaySetList:
    async with database.session() as session:
        rows = await recordings_repo.list_sets(session, user_id=user.user_id)
    return ReplaySetList(items=[ReplaySetOut.model_validate(r) for r in rows])


@router.put("/replay-sets/{name}", operation_id="saveReplaySet", response_model=ReplaySetOut)
async def save_set(name: SetName, data: ReplaySetIn, user: CurrentUserDep, database: DatabaseDep) -> ReplaySetOut:
    """Create or replace a regression set of your recorded runs."""
    row = await service.save_set(database, user_id=user.user_id, name=name, run_ids=data.run_ids)
    return ReplaySetOut.model_validate(row)


@router.delete("/replay-sets/{name}", operation_id="deleteReplaySet", status_code=204)
async def delete_set(name: SetName, user: CurrentUserDep, database: DatabaseDep) -> Response:
    async with database.transaction() as session:
        deleted = await recordings_repo.delete_set(session, user_id=user.user_id, name=name)
    if not deleted:
        raise NotFound(f"replay set {name!r} not found", code="replay_set_not_found")
    return Response(status_code=204)


@router.post("/replay-sets/{name}/replay", operation_id="replaySet", response_model=ReplaySetReportOut)
async def replay_set(
    name: SetName,
    request: Request,
    user: CurrentUserDep,
    database: DatabaseDep,
    settings: SettingsDep,
    data: ReplayIn | None = None,
) -> ReplaySetReportOut:
    """Replay every run of the set; `identical` is false when any run diverged or could not be replayed."""
    row = await service.get_set(database, user_id=user.user_id, name=name)
    version = data.program_version if data else None
    reports = await service.replay_many(
        row.run_ids,
        user_id=user.user_id,
        workspace_dir=user.workspace_root,
        program_version=version,
        **_args(request, database, settings),
    )
    items = [r.to_dict() if isinstance(r, service.ReplayReport) else r for r in reports]
    identical = all(item["result"] == "identical" for item in items)
    return ReplaySetReportOut.model_validate({"name": name, "identical": identical, "reports": items})
