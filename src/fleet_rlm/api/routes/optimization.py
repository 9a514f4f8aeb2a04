"""GEPA optimization over HTTP: modules, datasets, runs (progress, SSE, cancel), compare, promote, rollback.

GET /optimization/status lives with the health routes (another owner); everything else is here. Routes are
thin: the work is in `services/optimization_runs` (OptimizationService on app.state.optimization). Versions are per
user: a promotion changes the caller's own turns unless an admin promotes with `scope=global`; listing shows
the caller's versions and global ones (without their owner's dataset name and run id).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from fleet_rlm.api.auth import CurrentUserDep, require_admin
from fleet_rlm.api.deps import DatabaseDep, ReadDep, optimization_service
from fleet_rlm.api.sse import sse_response
from fleet_rlm.errors import Conflict, InvalidInput, NotFound
from fleet_rlm.events.status import FINAL
from fleet_rlm.optimize.compare import compare_runs, markdown_report
from fleet_rlm.optimize.datasets import load_dataset_text, validate_rows
from fleet_rlm.optimize.feedback import FeedbackRecord, rows_from_feedback
from fleet_rlm.optimize.gepa_run import GEPAConfig
from fleet_rlm.optimize.modules import get_module, list_modules
from fleet_rlm.schemas.common import Responses
from fleet_rlm.schemas.optimization import (
    CompareOut,
    DatasetCreate,
    DatasetDetail,
    DatasetFromFeedback,
    DatasetOut,
    ModuleOut,
    PromotionOut,
    PromotionScope,
    RollbackOut,
    RunCreate,
    RunOut,
    RunResults,
    VersionOut,
)
from fleet_rlm.store.models import Dataset, OptimizationRun, ProgramVersion
from fleet_rlm.store.repos import datasets as datasets_repo
from fleet_rlm.store.repos import feedback as feedback_repo
from fleet_rlm.store.repos import optimization as opt_repo
from fleet_rlm.store.repos import programs as programs_repo

router = APIRouter(prefix="/api/v1/optimization", tags=["optimization"])
NOT_FOUND: Responses = {404: {"description": "No such resource for this user."}}
MAX_FEEDBACK_ROWS = 5000


def dataset_not_found(dataset_id: str) -> NotFound:
    return NotFound(
        f"dataset {dataset_id} not found",
        code="dataset_not_found",
        action="list your datasets with GET /api/v1/optimization/datasets",
    )


@router.get("/modules", operation_id="listOptimizationModules", response_model=list[ModuleOut])
async def list_optimization_modules(user: CurrentUserDep) -> list[ModuleOut]:
    return [ModuleOut.model_validate(module.describe()) for module in list_modules()]


async def _save_dataset(database: DatabaseDep, user_id: str, module: str, name: str, rows: list[Any]) -> Dataset:
    async with database.transaction() as s:
        if await datasets_repo.get_dataset_by_name(s, user_id=user_id, module=module, name=name) is not None:
            raise Conflict(
                f"you already have a dataset named {name!r} for module {module!r}",
                code="dataset_exists",
                action="choose another name",
            )
        return await datasets_repo.create_dataset(s, user_id=user_id, module=module, name=name, rows=rows)


@router.post(
    "/datasets",
    operation_id="createOptimizationDataset",
    response_model=DatasetOut,
    status_code=201,
    responses={409: {"description": "Name taken."}, 422: {"description": "Invalid rows (details.errors)."}},
)
async def create_dataset(user: CurrentUserDep, database: DatabaseDep, body: DatasetCreate) -> DatasetOut:
    module = get_module(body.module)
    rows = load_dataset_text(module, body.content, filename=body.filename)
    row = await _save_dataset(database, user.user_id, module.name, body.name, rows)
    return DatasetOut.model_validate(row)


@router.post(
    "/datasets/from-feedback",
    operation_id="createOptimizationDatasetFromFeedback",
    response_model=DatasetDetail,
    status_code=201,
    responses={409: {"description": "Name taken."}, 422: {"description": "No usable feedback."}},
)
async def create_dataset_from_feedback(
    user: CurrentUserDep, database: DatabaseDep, body: DatasetFromFeedback
) -> DatasetDetail:
    module = get_module(body.module)
    async with database.session() as s:
        rated = await feedback_repo.list_rated(
            s,
            user_id=user.user_id,
            run_ids=body.run_ids,
            session_ids=body.session_ids,
            limit=MAX_FEEDBACK_ROWS,
            newest_first=False,
        )
    records = [
        FeedbackRecord(
            run_id=r.run.id,
            task=r.task,
            answer=r.answer,
            rating=r.feedback.rating,
            expected_answer=r.feedback.expected_answer,
            execution_mode=r.run.execution_mode,
        )
        for r in rated.items
    ]
    built = rows_from_feedback(module, records)
    if not built.rows or validate_rows(module, built.rows):
        raise InvalidInput(
            f"no usable feedback for module {module.name!r} ({len(rated.items)} rated runs)",
            code="dataset_no_feedback",
            action="rate answers (thumbs up, or thumbs down with the expected answer) and try again",
            details={"skipped": built.skipped},
        )
    row = await _save_dataset(database, user.user_id, module.name, body.name, built.rows)
    return DatasetDetail.model_validate(row, from_attributes=True).model_copy(
        update={"rows": built.rows[:50], "skipped": built.skipped}
    )


@router.get("/datasets", operation_id="listOptimizationDatasets", response_model=list[DatasetOut])
async def list_datasets(user: CurrentUserDep, s: ReadDep, module: str | None = None) -> list[DatasetOut]:
    rows = await datasets_repo.list_datasets(s, user_id=user.user_id, module=module)
    return [DatasetOut.model_validate(row) for row in rows]


@router.get(
    "/datasets/{dataset_id}", operation_id="getOptimizationDataset", response_model=DatasetDetail, responses=NOT_FOUND
)
async def get_dataset(
    user: CurrentUserDep, s: ReadDep, dataset_id: str, limit: int = Query(50, ge=0, le=10_000)
) -> DatasetDetail:
    row = await datasets_repo.get_dataset(s, dataset_id=dataset_id, user_id=user.user_id)
    if row is None:
        raise dataset_not_found(dataset_id)
    return DatasetDetail.model_validate(row, from_attributes=True).model_copy(update={"rows": (row.rows or [])[:limit]})


@router.post("/runs", operation_id="createOptimizationRun", response_model=RunOut, status_code=202, responses=NOT_FOUND)
async def create_run(user: CurrentUserDep, request: Request, body: RunCreate) -> RunOut:
    config = GEPAConfig(
        auto=body.auto,
        max_metric_calls=body.max_metric_calls,
        seed=body.seed,
        threads=body.threads,
        reflection_minibatch_size=body.reflection_minibatch_size,
    )
    service = optimization_service(request)
    run = await service.start(
        user_id=user.user_id,
        module=body.module,
        dataset_id=body.dataset_id,
        config=config,
        val_fraction=body.val_fraction,
    )
    return RunOut.model_validate(run)


@router.get("/runs", operation_id="listOptimizationRuns", response_model=list[RunOut])
async def list_runs(
    user: CurrentUserDep, s: ReadDep, module: str | None = None, limit: int = Query(100, ge=1, le=1000)
) -> list[RunOut]:
    rows = await opt_repo.list_runs(s, user_id=user.user_id, module=module, limit=limit)
    return [RunOut.model_validate(row) for row in rows]


def _summary(run: OptimizationRun) -> dict[str, Any]:
    return {
        "id": run.id,
        "module": run.module,
        "status": run.status,
        "scores": run.scores,
        "results": run.results,
        "config": run.config,
        "dataset_id": run.dataset_id,
        "dataset_name": (run.config or {}).get("dataset_name"),
        "program_version": run.program_version,
    }


@router.get("/runs/compare", operation_id="compareOptimizationRuns", response_model=CompareOut, responses=NOT_FOUND)
async def compare(user: CurrentUserDep, request: Request, a: str, b: str) -> CompareOut:
    service = optimization_service(request)
    first = await service.get(user_id=user.user_id, run_id=a)
    second = await service.get(user_id=user.user_id, run_id=b)
    return CompareOut.model_validate(compare_runs(_summary(first), _summary(second)))


@router.get("/runs/{run_id}", operation_id="getOptimizationRun", response_model=RunOut, responses=NOT_FOUND)
async def get_run(user: CurrentUserDep, request: Request, run_id: str) -> RunOut:
    return RunOut.model_validate(await optimization_service(request).get(user_id=user.user_id, run_id=run_id))


@router.get(
    "/runs/{run_id}/results", operation_id="getOptimizationRunResults", response_model=RunResults, responses=NOT_FOUND
)
async def get_results(user: CurrentUserDep, request: Request, run_id: str) -> RunResults:
    run = await optimization_service(request).get(user_id=user.user_id, run_id=run_id)
    results = run.results or {}
    return RunResults(
        run_id=run.id,
        examples=list(results.get("examples", [])),
        instructions_before=dict(results.get("instructions_before", {})),
        instructions_after=dict(results.get("instructions_after", {})),
        report_markdown=markdown_report(_summary(run)),
    )


@router.get(
    "/runs/{run_id}/stream",
    operation_id="streamOptimizationRun",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "progress frames, then the final run"}},
)
async def stream_run(user: CurrentUserDep, request: Request, run_id: str) -> StreamingResponse:
    """SSE: a `progress` frame whenever the run's progress changes, then a `finished` frame with the run."""
    service = optimization_service(request)
    await service.get(user_id=user.user_id, run_id=run_id)

    async def frames() -> AsyncIterator[dict[str, Any]]:
        last: dict[str, Any] | None = None
        async for run in service.stream(user_id=user.user_id, run_id=run_id):
            if run.progress != last:
                last = run.progress
                yield {"type": "progress", "run_id": run.id, "status": run.status, "progress": run.progress}
            if run.status in FINAL:
                yield {"type": "finished", "run": RunOut.model_validate(run).model_dump(mode="json")}

    return sse_response(frames())


@router.post("/runs/{run_id}/cancel", operation_id="cancelOptimizationRun", response_model=RunOut, responses=NOT_FOUND)
async def cancel_run(user: CurrentUserDep, request: Request, run_id: str) -> RunOut:
    return RunOut.model_validate(await optimization_service(request).cancel(user_id=user.user_id, run_id=run_id))


ScopeQuery = Query("user", description="user: your own turns; global: every user's (admins only).")
ADMIN_ONLY: Responses = {403: {"description": "admin_required: scope=global is for admins."}}


async def versions_out(database: DatabaseDep, user_id: str, rows: list[ProgramVersion]) -> list[VersionOut]:
    """Rows as the caller sees them: promotion state for their scope, other owners' dataset names hidden."""
    async with database.session() as s:
        current = await programs_repo.current_promotions(s, user_id=user_id)
        in_effect = await programs_repo.in_effect(s, user_id=user_id)
    mine = {key[0]: p for key, p in current.items() if key[1] == user_id}
    shared = {key[0]: p for key, p in current.items() if key[1] is None}
    items = []
    for row in rows:
        used = in_effect.get(row.module)
        follows = mine.get(row.module) if row.module in mine else shared.get(row.module)
        manifest = dict(row.manifest or {})
        if row.user_id != user_id:
            manifest.pop("optimization_run_id", None)
            if isinstance(manifest.get("dataset"), dict):
                manifest["dataset"] = {k: v for k, v in manifest["dataset"].items() if k not in ("id", "name")}
        promoted = used is not None and used.id == row.id
        items.append(
            VersionOut(
                id=row.id,
                module=row.module,
                version=row.version,
                owned=row.user_id == user_id,
                promoted=promoted,
                promoted_at=follows.promoted_at if promoted and follows is not None else None,
                promoted_for_you=row.module in mine and mine[row.module].version_id == row.id,
                promoted_globally=row.module in shared and shared[row.module].version_id == row.id,
                manifest=manifest,
                created_at=row.created_at,
            )
        )
    return items


@router.get(
    "/runs/{run_id}/promotion",
    operation_id="checkOptimizationPromotion",
    response_model=PromotionOut,
    responses={**NOT_FOUND, 409: {"description": "The run saved no version."}},
)
async def check_promotion(
    user: CurrentUserDep, request: Request, run_id: str, scope: PromotionScope = ScopeQuery
) -> PromotionOut:
    """The run's version beside the one the scope runs now, both scored on the run's validation rows: what a
    promotion would change, asked before promoting."""
    service = optimization_service(request)
    check = await service.promotion(user_id=user.user_id, run_id=run_id, globally=scope == "global")
    return PromotionOut.model_validate(check.to_dict())


ConfirmQuery = Query(False, description="Promote even when the version is not strictly better than the current one.")


@router.post(
    "/runs/{run_id}/promote",
    operation_id="promoteOptimizationRun",
    response_model=VersionOut,
    responses={
        **NOT_FOUND,
        **ADMIN_ONLY,
        409: {
            "description": "optimization_run_without_version: the run saved no version; promotion_not_better: "
            "not strictly better than the current version on the run's validation rows (details: both scores; "
            "retry with confirm=true)."
        },
    },
)
async def promote_run(
    user: CurrentUserDep,
    request: Request,
    database: DatabaseDep,
    run_id: str,
    scope: PromotionScope = ScopeQuery,
    confirm: bool = ConfirmQuery,
) -> VersionOut:
    """Make the run's version what your turns run (scope=global: what every user's turns run, unless they
    promoted their own). Refused (409 promotion_not_better) when it is not strictly better than the version it
    replaces on the run's validation rows, unless confirm=true."""
    if scope == "global":
        require_admin(user, "promoting a version for every user")
    service = optimization_service(request)
    row = await service.promote(user_id=user.user_id, run_id=run_id, globally=scope == "global", confirm=confirm)
    return (await versions_out(database, user.user_id, [row]))[0]


@router.post(
    "/modules/{module}/rollback",
    operation_id="rollbackOptimizationModule",
    response_model=RollbackOut,
    responses=ADMIN_ONLY,
)
async def rollback_module(
    user: CurrentUserDep, request: Request, database: DatabaseDep, module: str, scope: PromotionScope = ScopeQuery
) -> RollbackOut:
    """Withdraw your promotion of the module (scope=global: the global one, admins only); the one promoted
    before it in that scope applies again, else the global one, else the built-in. Nobody else's changes."""
    if scope == "global":
        require_admin(user, "rolling back the global version")
    row = await optimization_service(request).rollback(user_id=user.user_id, module=module, globally=scope == "global")
    promoted = (await versions_out(database, user.user_id, [row]))[0] if row is not None else None
    return RollbackOut(module=module, scope=scope, promoted=promoted)


@router.get("/versions", operation_id="listProgramVersions", response_model=list[VersionOut])
async def list_versions(user: CurrentUserDep, database: DatabaseDep, module: str | None = None) -> list[VersionOut]:
    """Your versions and the globally promoted ones, newest first."""
    async with database.session() as s:
        rows = await programs_repo.visible_versions(s, user_id=user.user_id, module=module)
    return await versions_out(database, user.user_id, rows)
