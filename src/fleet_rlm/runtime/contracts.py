"""What crosses the boundary between the runtime and its callers (API, CLI, benchmarks).

The runtime is handed a `TurnRequest`, an `EventSink` and a `CancelToken`, runs the turn synchronously on a worker
thread (never on the server's event loop) and returns a `TurnResult`. It never touches the database: the caller's
sink persists each event (assigning `seq`) before publishing it to live subscribers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from fleet_rlm.config import ExecutionMode
from fleet_rlm.events.status import RunOutcome
from fleet_rlm.mcp_servers import McpServerSpec
from fleet_rlm.runtime.repl_snapshots import ReplRestore, ResumePoint

if TYPE_CHECKING:
    from fleet_rlm.events import Event
    from fleet_rlm.sandbox.pool import LeaseInfo

SourceKind = Literal["text", "file", "url", "repo", "path"]
TurnStatus = Literal["succeeded", "failed", "cancelled"]
"""The `events.status.RunStatus` values a turn itself can end in (the caller adds `interrupted`)."""


@dataclass(frozen=True)
class ContextSource:
    """One piece of context the user gave. Which fields matter depends on `kind`.

    text: `text` (pasted), `name` optional. file: `path` on the host (an uploaded attachment), `name`,
    `media_type`. url: `url`. repo: `url` + optional `ref`. path: `path` relative to the workspace root.
    Any kind may carry `document` and `from_turn` when an earlier turn of the session loaded it.
    """

    kind: SourceKind
    name: str = ""
    text: str | None = None
    path: str | None = None
    url: str | None = None
    ref: str | None = None
    media_type: str | None = None
    attachment_id: str | None = None
    document: str | None = None
    """A source the session already holds: its document's file name in the session's context directory, used
    as loaded then (a URL is not fetched again, a file not converted again); loaded by reference if gone."""
    from_turn: int | None = None
    """The turn (counting from 1) that added a source the session holds; None for this turn's own sources."""


@dataclass(frozen=True)
class HistoryTurn:
    """A committed earlier turn of the session."""

    user_message: str
    answer: str


@dataclass(frozen=True)
class TurnOptions:
    """Per-turn knobs; a `None` budget means the server's (`Settings.turn_budgets`). The API passes a run's
    budgets resolved when the run was created (`fleet_rlm.budgets.TurnBudgets`, with its bounds)."""

    execution_mode: ExecutionMode = "auto"
    batch_concurrency: int | None = None
    max_depth: int | None = None
    max_iters: int | None = None
    max_llm_calls: int | None = None
    turn_timeout_s: float | None = None
    max_output_chars: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    skills: tuple[str, ...] = ()


@dataclass(frozen=True)
class TurnRequest:
    run_id: str
    session_id: str
    user_id: str
    workspace_id: str
    workspace_dir: Path
    task: str
    options: TurnOptions = field(default_factory=TurnOptions)
    sources: tuple[ContextSource, ...] = ()
    history: tuple[HistoryTurn, ...] = ()
    session_summary: str = ""
    program_versions: dict[str, str] = field(default_factory=dict)
    turn_id: str | None = None
    lm_provider: Callable[[str], Any] | None = None
    """role -> dspy.BaseLM for this turn only (the caller's own profiles); None uses the runtime's provider."""
    mcp_servers: tuple[McpServerSpec, ...] = ()
    """The caller's own MCP servers (the operator's come from settings); their tools join tools and rlm modes."""
    restore: ReplRestore | None = None
    """REPL state the session's root REPL loads before its first cell (a fork's first turn)."""
    resume: ResumePoint | None = None
    """This run was interrupted and continues: its first iterations come from their records (events of what
    was already recorded are not emitted again), then the REPL is restored and the run goes on live."""


@dataclass
class TurnResult:
    status: TurnStatus
    answer: str = ""
    fields: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    execution_mode: ExecutionMode = "auto"
    program_version: str | None = None
    summary: str = ""
    outcome: RunOutcome = "complete"
    """partial when a budget or the time limit stopped the turn and its answer was built from its progress."""
    stop_reason: str | None = None
    """The budget that stopped a partial turn (max_iters, max_llm_calls, turn_timeout_s, max_tokens...)."""


class EventSink(Protocol):
    """Receives every event of a turn in emission order; must be thread-safe (children emit from threads)."""

    def emit(self, event: Event) -> None: ...


class CancelToken:
    """A cancel request seen by the running turn. Callbacks let blocked work (a cell, an LM call) stop early."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self.reason: str = ""

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self, reason: str = "cancelled by request") -> None:
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a failing interrupt must not stop the others
                pass

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Register `callback`; runs at once if already cancelled. Returns a function that unregisters it."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)

                def remove() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return remove
        callback()
        return lambda: None

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)


class LiveSandboxes(Protocol):
    """The warm sandboxes a runtime holds, as the API lists and ends them: a `SandboxPool` (turns in this
    process), or every turn worker's pool (`ProcessRuntime.pool`). `leases` and `stats` may block briefly."""

    def leases(self) -> list[LeaseInfo]: ...

    def stats(self) -> dict[str, int]: ...

    def end_session(self, session_id: str) -> None: ...


class Runtime(Protocol):
    """What the services need of a turn runtime: `TurnRuntime`, or a scripted one in tests and demos."""

    def run_turn(self, request: TurnRequest, sink: EventSink, cancel: CancelToken) -> TurnResult:
        """Run the turn to its end (blocking; called from a worker thread). Raises only TurnAlreadyRunning."""
        ...

    def prepare(self, session_id: str, workspace_id: str) -> None:
        """A turn of this session that runs code is about to start: get its sandbox ready (never blocks long)."""
        ...

    def end_session(self, session_id: str) -> None:
        """Close the session's sandbox now (the session was deleted)."""
        ...

    def shutdown(self) -> None:
        """Release what the runtime owns (its sandbox pool)."""
        ...
