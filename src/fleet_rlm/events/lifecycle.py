"""Turn lifecycle and control events: a turn starts, is routed, loads context, and ends exactly one way.

Exactly one of turn_finished, turn_failed, turn_cancelled or turn_interrupted closes every turn_started;
clients may stop listening after it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fleet_rlm.events.base import EventBase
from fleet_rlm.events.status import RunOutcome

ExecutionMode = Literal["direct", "tools", "rlm"]
ContextSource = Literal["file", "attachment", "text", "url", "repository", "workspace", "history", "other"]


class TurnQueued(EventBase):
    """The turn waits in the job queue for a worker (queue execution); turn_started follows when one takes it."""

    type: Literal["turn_queued"] = "turn_queued"
    queue: str = Field(
        description="The queue it waits in: `turns` (any worker) or `turns@<worker>` (the one holding its REPL)."
    )


class TurnStarted(EventBase):
    """The run began executing a turn (after it left the queue)."""

    type: Literal["turn_started"] = "turn_started"
    turn_id: str | None = Field(default=None, description="Turn being executed, when it is stored.")
    requested_mode: str = Field(default="auto", description="Mode the user asked for: auto, direct, tools or rlm.")
    input_preview: str = Field(default="", description="Start of the user's message.")


class TurnFinished(EventBase):
    """The turn completed and produced its final answer (a `final` event precedes it).

    `partial` when a budget or the time limit stopped it: the answer was built from the work done so far."""

    type: Literal["turn_finished"] = "turn_finished"
    mode: ExecutionMode | None = Field(default=None, description="Mode that actually ran.")
    duration_ms: int = Field(default=0, ge=0, description="Wall-clock time of the turn.")
    outcome: RunOutcome = Field(
        default="complete", description="complete, or partial when a budget stopped the turn early."
    )
    stop_reason: str | None = Field(
        default=None, description="The budget that stopped a partial turn, e.g. max_llm_calls or turn_timeout_s."
    )


class TurnFailed(EventBase):
    """The turn stopped on an error it could not recover from."""

    type: Literal["turn_failed"] = "turn_failed"
    code: str = Field(description="Stable error code clients can match on.")
    message: str = Field(description="One-line description of the failure.")
    action: str | None = Field(default=None, description="What the user can do about it.")
    duration_ms: int = Field(default=0, ge=0, description="Wall-clock time until the failure.")


class TurnCancelled(EventBase):
    """The turn stopped because someone asked it to (a cancel request was honoured)."""

    type: Literal["turn_cancelled"] = "turn_cancelled"
    reason: str = Field(default="cancelled by user", description="Why it was cancelled.")
    requested_by: str | None = Field(default=None, description="User or component that asked for the cancel.")
    duration_ms: int = Field(default=0, ge=0, description="Wall-clock time until it stopped.")


class TurnInterrupted(EventBase):
    """The turn was cut off from outside: the server restarted or the run's heartbeat was lost."""

    type: Literal["turn_interrupted"] = "turn_interrupted"
    reason: str = Field(description="What interrupted it, e.g. server shutdown or heartbeat timeout.")


class Status(EventBase):
    """A human-readable progress line ("loading context", "starting sandbox") for spinners and logs."""

    type: Literal["status"] = "status"
    message: str = Field(description="Free text shown to the user.")
    phase: str | None = Field(default=None, description="Short machine-friendly phase name, when there is one.")


class RouteDecision(EventBase):
    """How the router chose to run the turn, and why."""

    type: Literal["route_decision"] = "route_decision"
    mode: ExecutionMode = Field(description="Chosen mode: direct answer, host tools (ReAct) or RLM.")
    reason: str = Field(description="Why this mode was chosen (rule or router model's rationale).")
    context_chars: int = Field(default=0, ge=0, description="Total characters of context the turn carries.")
    requested_mode: str = Field(default="auto", description="Mode the user asked for.")


class ContextLoaded(EventBase):
    """One piece of context became available to the turn (and, in RLM mode, to the REPL)."""

    type: Literal["context_loaded"] = "context_loaded"
    source: ContextSource = Field(description="Where it came from.")
    name: str = Field(description="File name, URL, repository@ref or label of the context.")
    chars: int = Field(default=0, ge=0, description="Size of the loaded text in characters.")
    bytes: int | None = Field(default=None, ge=0, description="Size of the raw source in bytes, when known.")
    variable: str | None = Field(default=None, description="REPL variable holding it, in RLM mode.")
    truncated: bool = Field(default=False, description="True when the source was cut to a size limit.")
    document: str | None = Field(default=None, description="Its document's file name in CONTEXT_DIR.")
    clone: str | None = Field(default=None, description="A repository's clone directory in CONTEXT_DIR.")
    from_turn: int | None = Field(
        default=None, ge=1, description="The earlier turn that added this source to the session; none if this turn."
    )


class WarningEvent(EventBase):
    """Something the user should know that did not stop the turn (reduced isolation, a truncated source)."""

    type: Literal["warning"] = "warning"
    code: str = Field(description="Stable warning code.")
    message: str = Field(description="One-line description.")


class ErrorEvent(EventBase):
    """An error a user can act on. Fatal ones are followed by turn_failed; others were recovered from."""

    type: Literal["error"] = "error"
    code: str = Field(description="Stable error code.")
    message: str = Field(description="One-line description.")
    action: str | None = Field(default=None, description="What the user can do about it.")
    fatal: bool = Field(default=False, description="True when the turn cannot continue.")


class BudgetExhausted(EventBase):
    """A limit of the turn was reached (iterations, LM calls, depth, time, tokens or cost)."""

    type: Literal["budget_exhausted"] = "budget_exhausted"
    budget: str = Field(description="Which limit, e.g. max_iters, max_llm_calls, max_depth, turn_timeout_s.")
    limit: float = Field(description="The configured limit.")
    used: float = Field(description="How much had been used when it was hit.")


class SandboxReset(EventBase):
    """The REPL sandbox broke and was replaced: variables defined so far are gone."""

    type: Literal["sandbox_reset"] = "sandbox_reset"
    reason: str = Field(description="What broke (worker crash, memory limit, lost connection...).")
    sandbox_id: str | None = Field(default=None, description="Id of the new sandbox, when it has one.")


LIFECYCLE_EVENTS = (
    TurnQueued,
    TurnStarted,
    TurnFinished,
    TurnFailed,
    TurnCancelled,
    TurnInterrupted,
    Status,
    RouteDecision,
    ContextLoaded,
    WarningEvent,
    ErrorEvent,
    BudgetExhausted,
    SandboxReset,
)
