"""`TurnRuntime`: runs one turn from "the user sent a task" to "the answer is committed", as a blocking call.

Event order of every turn: turn_started, [context_loaded...], route_decision, the steps of the chosen mode,
[budget_exhausted], final (when there is an answer), usage, summary, and exactly one of turn_finished /
turn_failed (after an `error` event) / turn_cancelled. Errors never escape `run_turn` as exceptions, except
`TurnAlreadyRunning`, raised before anything is emitted when the session already has an active turn.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import dspy

from fleet_rlm.budgets import TurnBudgets
from fleet_rlm.config import ExecutionMode, Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.events import (
    BudgetExhausted,
    ContextLoaded,
    ErrorEvent,
    Final,
    RouteDecision,
    Status,
    Summary,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    Usage,
    preview,
)
from fleet_rlm.llm.usage import LMCallRecord, UsageMeter
from fleet_rlm.runtime.callbacks import actor_callback, emit_lm_call
from fleet_rlm.runtime.context import history_variable, load_context
from fleet_rlm.runtime.contracts import CancelToken, EventSink, TurnRequest, TurnResult
from fleet_rlm.runtime.control import TurnControl
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.errors import BudgetStop, CancelledStop, TurnStop, classify
from fleet_rlm.runtime.gate import TurnGate
from fleet_rlm.runtime.lm_exchange import turn_inputs
from fleet_rlm.runtime.lms import LMProvider, TurnLMs, as_provider
from fleet_rlm.runtime.mcp_tools import McpToolbox
from fleet_rlm.runtime.modes.direct import run_direct
from fleet_rlm.runtime.modes.outcome import ModeOutcome
from fleet_rlm.runtime.modes.rlm import run_rlm
from fleet_rlm.runtime.modes.router import route
from fleet_rlm.runtime.modes.tools import run_tools
from fleet_rlm.runtime.programs import ProgramRegistry
from fleet_rlm.runtime.recording import recorder_for
from fleet_rlm.runtime.resume_lm import resume_provider
from fleet_rlm.runtime.scope import TurnScope
from fleet_rlm.runtime.workspace import ArtifactWatcher, prepare_workspace
from fleet_rlm.sandbox import SandboxPool, build_pool
from fleet_rlm.skills import skill_instructions

logger = logging.getLogger(__name__)
USAGE_EVERY_S = 2.0
RECORDED_ROLES = ("root", "sub", "delegate", "router")


def resolve_limits(request: TurnRequest, settings: Settings) -> TurnBudgets:
    """The request's budgets over the server's (the API passes a run's budgets already resolved)."""
    return settings.turn_budgets().over(asdict(request.options))


class TurnRuntime:
    def __init__(
        self,
        settings: Settings,
        *,
        pool: SandboxPool | None = None,
        lm_provider: LMProvider | Mapping[str, dspy.BaseLM] | None = None,
        programs: ProgramRegistry | None = None,
        gate: TurnGate | None = None,
    ) -> None:
        self.settings = settings
        self._own_pool = pool is None
        self.pool = pool or build_pool(settings)
        self.lm_provider = as_provider(lm_provider, settings)
        self.programs = programs
        self.gate = gate or TurnGate()

    def run_turn(self, request: TurnRequest, sink: EventSink, cancel: CancelToken) -> TurnResult:
        """Run the turn to its end (blocking; call it from a worker thread). Raises only TurnAlreadyRunning."""
        with self.gate.hold(request.session_id, request.run_id):
            return _Turn(self, request, sink, cancel).run()

    def prepare(self, session_id: str, workspace_id: str) -> None:
        """Start the session's sandbox in the background, so its turn finds it ready (`SandboxPool.prepare`)."""
        self.pool.prepare(session_id, workspace_id)

    def end_session(self, session_id: str) -> None:
        """Close the session's sandbox now (session deleted)."""
        self.pool.end_session(session_id)

    def shutdown(self) -> None:
        if self._own_pool:
            self.pool.shutdown()


class _Turn:
    def __init__(self, runtime: TurnRuntime, request: TurnRequest, sink: EventSink, cancel: CancelToken) -> None:
        self.runtime = runtime
        self.request = request
        self.cancel = cancel
        self.emitter = Emitter(sink, run_id=request.run_id, session_id=request.session_id)
        self._last_usage = float("-inf")  # the first LM call reports usage at once; later ones every USAGE_EVERY_S
        self.meter = UsageMeter(on_call=self._on_call)
        self.started = time.monotonic()
        settings = runtime.settings
        first_seq = request.resume.first_seq if request.resume is not None else 1
        self.recorder = recorder_for(
            sink, enabled=settings.recording_enabled, max_bytes=settings.recording_max_bytes, first_seq=first_seq
        )

    def _on_call(self, record: LMCallRecord) -> None:
        callback = actor_callback()  # runs in the LM call's own context: the calling actor's callback
        if callback is not None:
            callback.lm_finished(record)
        else:
            emit_lm_call(self.emitter.as_actor("router") if record.role == "router" else self.emitter, record)
        now = time.monotonic()
        if now - self._last_usage >= USAGE_EVERY_S:
            self._last_usage = now
            self.emitter.emit(Usage, **self.meter.snapshot().model_dump())

    def _usage_probe(self) -> tuple[int, float]:
        totals = self.meter.snapshot()
        return totals.tokens_in + totals.tokens_out, totals.cost_usd

    def run(self) -> TurnResult:
        request, settings = self.request, self.runtime.settings
        if request.resume is not None:  # what it already emitted is in its log: heard again once it goes live
            self.emitter.mute()
        self.emitter.emit(
            TurnStarted,
            turn_id=request.turn_id,
            requested_mode=request.options.execution_mode,
            input_preview=preview(request.task, 500),
        )
        control = TurnControl(resolve_limits(request, settings), self.cancel, usage=self._usage_probe)
        result = TurnResult(status="succeeded", execution_mode=request.options.execution_mode)
        scope: TurnScope | None = None
        try:
            provider = request.lm_provider or self.runtime.lm_provider
            if request.resume is not None:
                provider = resume_provider(provider, request.resume.exchanges)
            if self.recorder is not None:
                self.recorder.inputs = turn_inputs(request)
                self.recorder.learn(provider, RECORDED_ROLES)
            lms = TurnLMs(provider, control, self.meter, self.recorder)
            lms.require_root()
            root = prepare_workspace(settings.workspaces_dir, request.workspace_id)
            scope = TurnScope(
                settings=settings,
                control=control,
                lms=lms,
                workspace_id=request.workspace_id,
                workspace_root=root,
                session_id=request.session_id,
                pool=self.runtime.pool,
                watcher=ArtifactWatcher(root, self.emitter),
                program_versions=request.program_versions,
                registry=self.runtime.programs,
                skills=skill_instructions(request.options.skills),
                mcp=McpToolbox(
                    settings, control, self.emitter, servers=settings.mcp_servers, user_servers=request.mcp_servers
                ),
                restore=request.restore,
                resume=request.resume,
                on_live=self.emitter.unmute,
            )
            history = history_variable(request.history, request.session_summary)
            outcome, mode = execute_turn(scope, self.emitter, request, history)
            result.answer, result.fields = outcome.answer, outcome.fields
            result.execution_mode = mode
            result.program_version = outcome.version
            if outcome.hit_max_iters:  # the RLM ran out of iterations and extracted an answer from its trajectory
                result.outcome, result.stop_reason = "partial", "max_iters"
        except CancelledStop as stop:
            result.status = "cancelled"
            result.error = {"code": "cancelled", "message": stop.reason}
        except BudgetStop as stop:
            self.emitter.emit(BudgetExhausted, budget=stop.budget, limit=stop.limit, used=stop.used)
            why = f"the {stop.budget} budget ({stop.limit:g}) was reached"
            result.answer = scope.progress.partial_answer(why) if scope else f"(No answer: {why}.)"
            result.outcome, result.stop_reason = "partial", stop.budget
            result.fields = {"answer": result.answer, "budget_exhausted": stop.budget, "partial": True}
        except TurnStop as stop:  # pragma: no cover - every stop is one of the two above
            result.status, result.error = "cancelled", {"code": "cancelled", "message": str(stop)}
        except Exception as exc:
            if self.cancel.cancelled:  # an error caused by the interrupt itself
                result.status = "cancelled"
            else:
                error = classify(exc)
                if not isinstance(exc, FleetError):
                    logger.warning("turn %s failed", request.run_id, exc_info=exc)
                result.status, result.error = "failed", error.to_dict() | {"action": error.action}
        finally:
            control.close()
            if scope is not None and scope.mcp is not None:
                scope.mcp.close()
        if scope is not None:
            result.fields.setdefault("programs", dict(scope.used_programs))
            if result.status != "failed":
                scope.watcher.scan(self.emitter)
        return self._finish(result, control)

    def _finish(self, result: TurnResult, control: TurnControl) -> TurnResult:
        emit, duration = self.emitter.emit, int((time.monotonic() - self.started) * 1000)
        if self.recorder is not None:
            self.recorder.done(result.status, result.answer, result.fields.get("programs"))
        if result.status == "succeeded":
            emit(Final, answer=result.answer, fields=result.fields)
        if result.status == "failed" and result.error:
            emit(
                ErrorEvent,
                code=result.error["code"],
                message=result.error["message"],
                action=result.error.get("action"),
                fatal=True,
            )
        self.meter.add_iterations(control.iterations)
        self.emitter.seal()
        usage = self.meter.snapshot()
        result.usage = usage.model_dump(mode="json")
        emit(Usage, **usage.model_dump())
        result.summary = self._summary(result, usage.lm_calls, control.iterations)
        emit(Summary, text=result.summary)
        mode = result.execution_mode if result.execution_mode in ("direct", "tools", "rlm") else None
        if result.status == "succeeded":
            emit(TurnFinished, mode=mode, duration_ms=duration, outcome=result.outcome, stop_reason=result.stop_reason)
        elif result.status == "cancelled":
            emit(TurnCancelled, reason=self.cancel.reason or "cancelled", duration_ms=duration)
        else:
            error: dict[str, Any] = result.error or {}
            emit(
                TurnFailed,
                code=error.get("code", "internal_error"),
                message=error.get("message", ""),
                action=error.get("action"),
                duration_ms=duration,
            )
        return result

    def _summary(self, result: TurnResult, lm_calls: int, iterations: int) -> str:
        head = f"{result.execution_mode} turn {result.status}"
        stats = (
            f"{iterations} REPL step{'' if iterations == 1 else 's'}, {lm_calls} LM call{'' if lm_calls == 1 else 's'}"
        )
        if result.status == "succeeded":
            return f"{head} ({stats}): {preview(result.answer, 300)}"
        detail = (result.error or {}).get("message", "")
        return f"{head} ({stats}){': ' + detail if detail else ''}"


# ---- the middle of a turn: load the context, route, run the chosen mode ----

SOURCE_EVENT_KIND = {"text": "text", "file": "file", "url": "url", "repo": "repository", "path": "workspace"}


def execute_turn(
    scope: TurnScope, emitter: Emitter, request: TurnRequest, history: str
) -> tuple[ModeOutcome, ExecutionMode]:
    def on_loaded(kind: str, chars: int, info: dict[str, Any]) -> None:
        source = "attachment" if info.get("attachment_id") else SOURCE_EVENT_KIND.get(kind, "other")
        raw = info.get("bytes")
        emitter.emit(
            ContextLoaded,
            source=source,
            name=str(info.get("name") or kind),
            chars=chars,
            bytes=raw if isinstance(raw, int) else None,
            variable="context",
            truncated=bool(info.get("truncated")),
            document=str(info.get("path") or "") or None,
            clone=str(info.get("repo_path") or "") or None,
            from_turn=info.get("from_turn") or None,
        )

    if request.sources:
        emitter.emit(Status, message=f"loading {len(request.sources)} context source(s)", phase="context")
    context = load_context(
        request.sources,
        workspace_dir=scope.workspace_root,
        context_dir=scope.context_dir,
        settings=scope.settings,
        emit=on_loaded,
        cancel=scope.control.cancel,
    )
    scope.control.check()
    decision = route(scope, requested=request.options.execution_mode, task=request.task, context=context)
    emitter.emit(
        RouteDecision,
        mode=decision.mode,
        reason=decision.reason,
        context_chars=context.total_chars,
        requested_mode=request.options.execution_mode,
    )
    scope.control.check()
    if decision.mode == "direct":
        return run_direct(scope, emitter, task=request.task, context=context, history=history), "direct"
    if decision.mode == "tools":
        return run_tools(scope, emitter, task=request.task, context=context, history=history), "tools"
    outcome = run_rlm(
        scope,
        emitter,
        task=request.task,
        context=context.as_variable(),
        history=history,
        depth=0,
        session_id=request.session_id,
    )
    return outcome, "rlm"
