"""Runtime settings a user may change for their own turns, and the truthful status of what serves them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from fleet_rlm.budgets import BatchConcurrency, MaxDepth, MaxIters, MaxLLMCalls, TurnTimeoutS
from fleet_rlm.config import ExecutionMode


class RuntimeOverrides(BaseModel):
    """The editable settings, within the server's own bounds (fleet_rlm.budgets). Absent or null: the default."""

    model_config = ConfigDict(extra="forbid")

    default_mode: ExecutionMode | None = Field(default=None, description="Mode of turns that name none.")
    max_iters: MaxIters | None = Field(default=None, description="RLM iterations per turn.")
    max_llm_calls: MaxLLMCalls | None = Field(default=None, description="LM calls per turn.")
    max_depth: MaxDepth | None = Field(default=None, description="Deepest rlm_query child level.")
    batch_concurrency: BatchConcurrency | None = Field(default=None, description="Parallel sub-LM calls.")
    turn_timeout_s: TurnTimeoutS | None = Field(default=None, description="Wall-clock limit of a turn.")


class RuntimeValues(BaseModel):
    default_mode: str = Field(description="auto, direct, tools or rlm.")
    max_iters: int
    max_llm_calls: int
    max_depth: int
    batch_concurrency: int
    turn_timeout_s: float


class RuntimeSettingsOut(BaseModel):
    """`effective` is what your next turn starts from (a turn's own fields still win)."""

    effective: RuntimeValues
    overrides: dict[str, Any] = Field(description="Your overrides only (the rest are server defaults).")
    defaults: RuntimeValues = Field(description="The server's settings.")
    server: dict[str, Any] = Field(description="Server-wide settings you cannot change (for reference).")


RuntimeSettingsPatch = RuntimeOverrides


class DatabaseStatus(BaseModel):
    kind: str = Field(description="sqlite or postgresql.")
    reachable: bool
    revision: str | None = Field(description="The schema revision the database is at.")
    head: str = Field(description="The revision this code needs.")
    at_head: bool
    error: str | None


class SandboxStatus(BaseModel):
    backend: str
    isolation: str
    usable: bool
    reason: str | None
    pool: dict[str, int] | None = Field(description="Warm workers: spares, starting, leased, idle.")
    live_sandboxes: int = Field(description="Your sessions' live sandboxes.")


class DaytonaStatus(BaseModel):
    configured: bool
    api_url: str | None
    reachable: bool | None = Field(description="Whether the API answered; null when not configured.")
    detail: str


class RootModelStatus(BaseModel):
    configured: bool
    profile_name: str | None
    model: str | None
    source: str | None = Field(description="binding, env or fallback.")
    problem: str | None


class TracingStatus(BaseModel):
    """OpenTelemetry export of runs (docs/tracing.md); span counters since the server started."""

    enabled: bool
    endpoint: str | None = Field(default=None, description="OTLP/HTTP traces endpoint (credentials removed).")
    capture_content: bool = False
    traces_started: int = 0
    queued_spans: int = Field(default=0, description="Ended spans waiting for the exporter.")
    exported_spans: int = Field(default=0, description="Spans the collector accepted.")
    failed_spans: int = Field(default=0, description="Spans lost to failed exports (collector down or refusing).")
    dropped_spans: int = Field(default=0, description="Spans dropped because the bounded queue was full.")


class QueueWorkerStatus(BaseModel):
    """One `fleet-rlm worker` on the job queue."""

    name: str = Field(description="host:pid of the worker process.")
    alive: bool = Field(description="Its queue heartbeat is fresher than FLEET_RUN_STALE_AFTER_S.")
    last_heartbeat: str | None = Field(description="When it last beat (ISO 8601), if ever.")
    turn_slots: int = Field(description="Turns it runs at once (`--concurrency`).")
    turns_running: int
    optimization_slots: int = Field(description="Optimization runs it runs at once (`--optimization-slots`).")
    optimizations_running: int


class QueueStatus(BaseModel):
    """The job queue of queue execution (PostgreSQL): what to monitor."""

    reachable: bool
    depth: dict[str, int] = Field(default_factory=dict, description="Waiting jobs per queue.")
    running: int = Field(default=0, description="Jobs being run by a worker.")
    stalled: int = Field(default=0, description="Running jobs whose worker stopped beating.")
    workers: list[QueueWorkerStatus] = Field(default_factory=list)
    error: str | None = None


class RuntimeStatus(BaseModel):
    database: DatabaseStatus
    sandbox: SandboxStatus
    daytona: DaytonaStatus
    root_model: RootModelStatus
    active_runs: int = Field(description="Your queued or running turns.")
    turn_workers: int = Field(
        default=0, description="Worker processes that run turns (FLEET_TURN_PROCESSES); 0: threads of the server."
    )
    tracing: TracingStatus = Field(default_factory=lambda: TracingStatus(enabled=False))
    execution: Literal["inline", "queue"] = Field(
        default="inline",
        description="inline: turns run in the server; queue: on `fleet-rlm worker`s (FLEET_EXECUTION).",
    )
    queue: QueueStatus | None = Field(default=None, description="The job queue (queue execution only).")


class SmokeStep(BaseModel):
    name: str
    ok: bool
    detail: str
    action: str | None


class DaytonaTestResult(BaseModel):
    available: bool = Field(description="Whether this server has the Daytona smoke check.")
    configured: bool
    ok: bool = Field(description="True when every step passed.")
    steps: list[SmokeStep]
    message: str


class SandboxOut(BaseModel):
    """A live sandbox (a warm Python REPL) held by one of your sessions; its id is the session id."""

    id: str = Field(description="The session id (one sandbox per session).")
    session_id: str
    workspace_id: str
    backend: str
    started_at: datetime
    last_used_at: datetime
    busy: bool = Field(description="A turn is using it now.")
    alive: bool


class SandboxList(BaseModel):
    items: list[SandboxOut]
