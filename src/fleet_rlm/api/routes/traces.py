"""Feedback on traces: thumbs up/down on a run, a comment and the expected answer (GEPA learns from these).

One rating per user and run. Read it back per run, per turn, per session or all of yours (paged, filtered by
rating and mode); replace it (POST, PUT), edit it (PATCH) or clear it (DELETE). Another user's run is 404.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.api.deps import ReadDep, TxDep
from fleet_rlm.api.pagination import PageDep
from fleet_rlm.errors import NotFound
from fleet_rlm.schemas.common import Responses
from fleet_rlm.schemas.feedback import (
    FeedbackCreate,
    FeedbackOut,
    FeedbackPage,
    FeedbackPatch,
    FeedbackPut,
    RatedRunOut,
    Rating,
)
from fleet_rlm.services.lookups import owned_run
from fleet_rlm.store.repos import feedback

router = APIRouter(prefix="/api/v1/traces", tags=["traces"])
NOT_FOUND: Responses = {404: {"description": "No such run for this user, or no feedback on it."}}


def feedback_not_found(run_id: str) -> NotFound:
    return NotFound(
        f"you have not rated run {run_id}",
        code="feedback_not_found",
        action="rate it with PUT /api/v1/traces/feedback/{run_id}",
    )


def rated_out(item: feedback.RatedRun) -> RatedRunOut:
    return RatedRunOut.model_validate(
        {
            **FeedbackOut.model_validate(item.feedback).model_dump(),
            "session_id": item.run.session_id,
            "turn_id": item.run.turn_id,
            "execution_mode": item.run.execution_mode,
            "program_version": item.run.program_version,
            "task": item.task,
            "answer": item.answer,
        }
    )


@router.post(
    "/feedback",
    operation_id="createTraceFeedback",
    response_model=FeedbackOut,
    status_code=201,
    responses={404: {"description": "No such run for this user."}},
)
async def create_trace_feedback(user: CurrentUserDep, s: TxDep, body: FeedbackCreate) -> FeedbackOut:
    """Rate a run; rating it again replaces your earlier feedback (same as PUT /feedback/{run_id})."""
    await owned_run(s, user_id=user.user_id, run_id=body.run_id)
    row = await feedback.put_feedback(
        s,
        run_id=body.run_id,
        user_id=user.user_id,
        rating=body.rating,
        comment=body.comment,
        expected_answer=body.expected_answer,
    )
    return FeedbackOut.model_validate(row)


@router.get("/feedback", operation_id="listTraceFeedback", response_model=FeedbackPage)
async def list_trace_feedback(
    user: CurrentUserDep,
    s: ReadDep,
    page: PageDep,
    run_id: Annotated[str | None, Query(description="Only this run.")] = None,
    turn_id: Annotated[str | None, Query(description="Only this turn's run.")] = None,
    session_id: Annotated[str | None, Query(description="Only runs of this session.")] = None,
    rating: Annotated[Rating | None, Query(description="Only up (good) or down (bad).")] = None,
    mode: Annotated[
        str | None, Query(max_length=16, description="Only runs of this mode (direct, tools, rlm).")
    ] = None,
) -> FeedbackPage:
    """Your feedback on your runs, most recently rated first, each with the task and the answer it rated."""
    found = await feedback.list_rated(
        s,
        user_id=user.user_id,
        run_ids=[run_id] if run_id is not None else None,
        session_ids=[session_id] if session_id is not None else None,
        turn_id=turn_id,
        rating=rating,
        mode=mode,
        limit=page.limit,
        offset=page.offset,
    )
    items = [rated_out(item) for item in found.items]
    return FeedbackPage(items=items, total=found.total, limit=page.limit, offset=page.offset)


@router.get("/feedback/{run_id}", operation_id="getTraceFeedback", response_model=FeedbackOut, responses=NOT_FOUND)
async def get_trace_feedback(user: CurrentUserDep, s: ReadDep, run_id: str) -> FeedbackOut:
    await owned_run(s, user_id=user.user_id, run_id=run_id)
    row = await feedback.get_feedback(s, run_id=run_id, user_id=user.user_id)
    if row is None:
        raise feedback_not_found(run_id)
    return FeedbackOut.model_validate(row)


@router.put("/feedback/{run_id}", operation_id="putTraceFeedback", response_model=FeedbackOut, responses=NOT_FOUND)
async def put_trace_feedback(user: CurrentUserDep, s: TxDep, run_id: str, body: FeedbackPut) -> FeedbackOut:
    """Set your feedback on the run (created, or replaced with exactly these fields)."""
    await owned_run(s, user_id=user.user_id, run_id=run_id)
    row = await feedback.put_feedback(
        s,
        run_id=run_id,
        user_id=user.user_id,
        rating=body.rating,
        comment=body.comment,
        expected_answer=body.expected_answer,
    )
    return FeedbackOut.model_validate(row)


@router.patch("/feedback/{run_id}", operation_id="patchTraceFeedback", response_model=FeedbackOut, responses=NOT_FOUND)
async def patch_trace_feedback(user: CurrentUserDep, s: TxDep, run_id: str, body: FeedbackPatch) -> FeedbackOut:
    """Change only the fields you send (null clears the comment or expected answer)."""
    await owned_run(s, user_id=user.user_id, run_id=run_id)
    changes = body.model_dump(exclude_unset=True)
    if changes.get("rating", "") is None:
        del changes["rating"]  # a rating cannot be cleared: DELETE the feedback instead
    row = await feedback.update_feedback(s, run_id=run_id, user_id=user.user_id, **changes)
    if row is None:
        raise feedback_not_found(run_id)
    return FeedbackOut.model_validate(row)


@router.delete("/feedback/{run_id}", operation_id="deleteTraceFeedback", status_code=204, responses=NOT_FOUND)
async def delete_trace_feedback(user: CurrentUserDep, s: TxDep, run_id: str) -> Response:
    await owned_run(s, user_id=user.user_id, run_id=run_id)
    if not await feedback.delete_feedback(s, run_id=run_id, user_id=user.user_id):
        raise feedback_not_found(run_id)
    return Response(status_code=204)
