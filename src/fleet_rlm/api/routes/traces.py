"""Feedback on traces: thumbs up/down on a run, a comment and the expected answer (GEPA learns from these)."""

from __future__ import annotations

from fastapi import APIRouter

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.api.deps import TxDep
from fleet_rlm.schemas.runs import FeedbackCreate, FeedbackOut
from fleet_rlm.services.lookups import owned_run
from fleet_rlm.store.repos import feedback

router = APIRouter(prefix="/api/v1/traces", tags=["traces"])


@router.post(
    "/feedback",
    operation_id="createTraceFeedback",
    response_model=FeedbackOut,
    status_code=201,
    responses={404: {"description": "No such run for this user."}},
)
async def create_trace_feedback(user: CurrentUserDep, s: TxDep, body: FeedbackCreate) -> FeedbackOut:
    await owned_run(s, user_id=user.user_id, run_id=body.run_id)
    row = await feedback.add_feedback(
        s,
        run_id=body.run_id,
        user_id=user.user_id,
        rating=body.rating,
        comment=body.comment,
        expected_answer=body.expected_answer,
    )
    return FeedbackOut.model_validate(row)
