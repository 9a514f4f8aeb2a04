"""Runs, their events and the steps derived from them (feedback on runs: schemas/feedback.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from fleet_rlm.events.status import RunOutcome, RunStatus
from fleet_rlm.schemas.common import Out


class RunOut(Out):
    id: str
    session_id: str
    turn_id: str | None
    status: RunStatus = Field(
        description="queued or running (active); succeeded, failed, cancelled or interrupted (final)."
    )
    outcome: RunOutcome | None = Field(
        default=None,
        description="Of a succeeded run: complete, or partial when a budget or the time limit stopped it early.",
    )
    stop_reason: str | None = Field(
        default=None, description="The budget that stopped a partial run, e.g. max_llm_calls or turn_timeout_s."
    )
    execution_mode: str
    program_version: str | None
    budgets: dict[str, Any]
    usage: dict[str, Any]
    error: dict[str, Any] | None
    last_seq: int = Field(description="Seq of the run's latest event (0 when it has none).")
    trace_id: str | None = Field(default=None, description="OpenTelemetry trace id (32 hex) when the run is traced.")
    span_id: str | None = Field(default=None, description="The trace's root span id (16 hex).")
    trace_url: str | None = Field(
        default=None, description="Link to the trace in the operator's tracing UI (FLEET_OTEL_TRACE_URL_TEMPLATE)."
    )
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None
    cancel_requested_at: datetime | None


class EventOut(Out):
    run_id: str
    seq: int
    type: str
    ts: datetime
    depth: int
    actor: str | None
    parent_id: str | None
    payload: dict[str, Any]


class EventPage(BaseModel):
    items: list[dict[str, Any]] = Field(
        description="Events exactly as live clients receive them (see the event JSON Schema and docs/events.md)."
    )
    next_after: int | None = Field(description="Pass as `after` to get the next page; null when caught up.")
    last_seq: int = Field(description="The run's latest seq when this page was read.")


StepKind = Literal["iteration", "tool", "sub_lm", "child", "event"]


class StepOut(BaseModel):
    index: int
    kind: StepKind
    key: str | None = Field(description="What grouped the events: the iteration number, call id or child id.")
    actor: str | None
    depth: int
    first_seq: int
    last_seq: int
    started_at: datetime
    ended_at: datetime
    types: list[str] = Field(description="Event types in this step, in order of first appearance.")
    events: list[EventOut]


class StepList(BaseModel):
    run_id: str
    items: list[StepOut]
    truncated: bool = Field(description="True when the run has more events than one steps view covers.")
