"""Runs: status, the replayable event log (paged by seq) and the steps view. Cancellation lives with the runtime."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.api.deps import SettingsDep, TxDep
from fleet_rlm.schemas.common import Responses
from fleet_rlm.schemas.runs import EventOut, EventPage, RunOut, StepList
from fleet_rlm.services.live.codec import row_to_json
from fleet_rlm.services.lookups import owned_run
from fleet_rlm.services.steps import group_steps
from fleet_rlm.store.repos import events
from fleet_rlm.telemetry.links import trace_url

router = APIRouter(prefix="/api/v1/runs", tags=["runs"])
NOT_FOUND: Responses = {404: {"description": "No such run for this user."}}
MAX_EVENTS_PAGE = 1000
STEPS_MAX_EVENTS = 5000


@router.get("/{run_id}", operation_id="getRun", response_model=RunOut, responses=NOT_FOUND)
async def get_run(run_id: str, user: CurrentUserDep, s: TxDep, settings: SettingsDep) -> RunOut:
    run = await owned_run(s, user_id=user.user_id, run_id=run_id)
    link = trace_url(settings.otel_trace_url_template, run.trace_id, run.span_id)
    return RunOut.model_validate(run).model_copy(update={"trace_url": link})


@router.get("/{run_id}/events", operation_id="listRunEvents", response_model=EventPage, responses=NOT_FOUND)
async def list_run_events(
    run_id: str,
    user: CurrentUserDep,
    s: TxDep,
    after: Annotated[int, Query(ge=0, description="Return events with seq > after (0 = from the start).")] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_EVENTS_PAGE, description="At most 1000 events per page.")] = 500,
) -> EventPage:
    """Replay the run's events in seq order; follow `next_after` until it is null, then go live."""
    run = await owned_run(s, user_id=user.user_id, run_id=run_id)
    rows = await events.list_events(s, run_id=run_id, after_seq=after, limit=limit)
    items = [row_to_json(row, session_id=run.session_id) for row in rows]
    last_seq = max(run.last_seq, rows[-1].seq if rows else 0)
    next_after = rows[-1].seq if rows and rows[-1].seq < last_seq else None
    return EventPage(items=items, next_after=next_after, last_seq=last_seq)


@router.get("/{run_id}/steps", operation_id="listRunSteps", response_model=StepList, responses=NOT_FOUND)
async def list_run_steps(run_id: str, user: CurrentUserDep, s: TxDep) -> StepList:
    """The run's events grouped into steps: per iteration (reasoning, code, output, variables), tool calls, sub-LM
    calls and children; other events stand alone. Covers the first 5000 events (`truncated` says if more)."""
    collected: list[EventOut] = []
    run = await owned_run(s, user_id=user.user_id, run_id=run_id)
    after = 0
    while len(collected) < STEPS_MAX_EVENTS:
        rows = await events.list_events(s, run_id=run_id, after_seq=after, limit=MAX_EVENTS_PAGE)
        collected.extend(EventOut.model_validate(row) for row in rows)
        if len(rows) < MAX_EVENTS_PAGE:
            break
        after = rows[-1].seq
    collected = collected[:STEPS_MAX_EVENTS]
    truncated = bool(collected) and collected[-1].seq < run.last_seq
    return StepList(run_id=run_id, items=group_steps(collected), truncated=truncated)
