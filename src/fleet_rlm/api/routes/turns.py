"""Start a turn and stream it (SSE), follow any run as SSE, and cancel a run durably."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.api.deps import DatabaseDep
from fleet_rlm.api.sse import resume_point, sse_response
from fleet_rlm.errors import InvalidInput, NotFound
from fleet_rlm.schemas.common import Responses
from fleet_rlm.services.live.follow import follow_run
from fleet_rlm.services.turns.inputs import TurnInput
from fleet_rlm.services.turns.run_deps import Caller
from fleet_rlm.services.turns.service import TurnService
from fleet_rlm.store.repos import runs as runs_repo

router = APIRouter(prefix="/api/v1", tags=["turns"])

SSE_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The run's events as Server-Sent Events (`id:` is the seq, `event:` the type).",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


class CancellationState(BaseModel):
    run_id: str
    status: str
    cancel_requested: bool


def turn_service(request: Request) -> TurnService:
    service: TurnService = request.app.state.turns
    return service


def caller_of(user: object) -> Caller:
    return Caller(
        user_id=user.user_id,  # type: ignore[attr-defined]
        workspace_id=user.workspace_id,  # type: ignore[attr-defined]
        workspace_dir=user.workspace_root,  # type: ignore[attr-defined]
    )


@router.post(
    "/sessions/{session_id}/turns",
    operation_id="createTurn",
    response_class=StreamingResponse,
    responses={**SSE_RESPONSE, 409: {"description": "A turn is running, or the key was used for another input."}},
)
async def create_turn(
    session_id: str,
    data: TurnInput,
    request: Request,
    user: CurrentUserDep,
    database: DatabaseDep,
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key", max_length=255)] = None,
) -> StreamingResponse:
    """Run a turn and stream its events. The same Idempotency-Key with the same input replays that run."""
    if not idempotency_key:
        raise InvalidInput(
            "the Idempotency-Key header is required",
            code="idempotency_key_required",
            status=400,
            action="send a unique Idempotency-Key (e.g. a UUID) with each new turn",
        )
    service = turn_service(request)
    run = await service.start(caller_of(user), session_id=session_id, data=data, idempotency_key=idempotency_key)
    events = follow_run(database, service.bus, run_id=run.id, session_id=run.session_id)
    return sse_response(events, headers={"X-Run-Id": run.id})


@router.get(
    "/runs/{run_id}/stream", operation_id="streamRunEvents", response_class=StreamingResponse, responses=SSE_RESPONSE
)
async def stream_run(
    run_id: str,
    request: Request,
    user: CurrentUserDep,
    database: DatabaseDep,
    after: Annotated[int | None, Query(ge=0, description="Replay events after this seq, then follow live.")] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> StreamingResponse:
    """Follow a run as SSE: replay after `after` (or Last-Event-ID), then live until its terminal event."""
    async with database.session() as session:
        run = await runs_repo.get_run(session, run_id=run_id, user_id=user.user_id)
    if run is None:
        raise NotFound(f"run {run_id} not found")
    service = turn_service(request)
    events = follow_run(
        database, service.bus, run_id=run.id, session_id=run.session_id, after=resume_point(after, last_event_id)
    )
    return sse_response(events, headers={"X-Run-Id": run.id})


CANCEL_RESPONSES: Responses = {
    404: {"description": "No such run for this user."},
    409: {"description": "`run_finished`: the run is no longer active (it ended, or never ran: a fork's record)."},
}


@router.put(
    "/runs/{run_id}/cancellation",
    operation_id="cancelRun",
    response_model=CancellationState,
    status_code=202,
    responses=CANCEL_RESPONSES,
)
async def cancel_run(run_id: str, request: Request, user: CurrentUserDep) -> CancellationState:
    """Ask an active run to stop (durable: any server process executing it sees the request)."""
    run = await turn_service(request).cancel(user_id=user.user_id, run_id=run_id)
    return CancellationState(run_id=run.id, status=run.status, cancel_requested=run.cancel_requested_at is not None)
