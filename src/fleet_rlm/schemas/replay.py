"""Replays of recorded runs and the regression sets they are grouped in."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from fleet_rlm.schemas.common import In, Out

SET_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


class ReplayIn(In):
    program_version: str | None = Field(
        default=None, max_length=64, description="Replay with this saved program version instead of the recorded one."
    )


class DivergenceOut(Out):
    reason: str = Field(
        description="unrecorded_request (a request the recording lacks), not_stored (over recording_max_bytes), "
        "missing_calls (the replay made fewer calls) or outcome_differs (same calls, another answer)."
    )
    role: str | None = Field(description="Role of the divergent request: root, sub, delegate or router.")
    index: int = Field(description="The replay's n-th LM call (1-based) where it diverged.")
    role_index: int | None = Field(description="The n-th call of that role.")
    recorded_seq: int | None = Field(description="The closest recorded exchange (its seq in the recording).")
    recorded_role: str | None
    request_hash: str | None
    diff: str = Field(description="Unified diff of the closest recorded request's messages and the replayed one.")


class ReplayReportOut(Out):
    run_id: str
    result: Literal["identical", "diverged"]
    program_versions: dict[str, str]
    calls_recorded: int
    calls_replayed: int
    truncated: bool
    status_recorded: str | None
    status_replayed: str
    answer_recorded: str
    answer_replayed: str
    divergence: DivergenceOut | None
    duration_ms: int
    warnings: list[str]


class ReplayErrorOut(Out):
    run_id: str
    result: Literal["error"]
    error: dict[str, Any]


class ReplaySetIn(In):
    run_ids: list[str] = Field(min_length=1, max_length=500)


class ReplaySetOut(Out):
    name: str
    run_ids: list[str]
    created_at: datetime
    updated_at: datetime


class ReplaySetList(Out):
    items: list[ReplaySetOut]


class ReplaySetReportOut(Out):
    name: str
    identical: bool = Field(description="True when every run of the set replayed identically.")
    reports: list[ReplayReportOut | ReplayErrorOut]


class ExchangeOut(Out):
    seq: int = Field(description="Call order within the run, from 1.")
    role: str
    actor: str = Field(description="root, or child:<id> for a child RLM.")
    depth: int
    request_hash: str = Field(description="sha256 of the canonical request: what a replay matches on.")
    truncated: bool = Field(description="Past recording_max_bytes: kept by hash only.")
    error: str | None
    request: dict[str, Any] | None = Field(default=None, description="With bodies=true: model, messages, params.")
    response: dict[str, Any] | None = Field(default=None, description="With bodies=true: outputs and usage.")


class RecordingOut(Out):
    run_id: str
    calls: int
    bytes: int
    truncated: bool
    status: str | None
    programs_used: dict[str, str]
    exchanges: list[ExchangeOut]
