"""The middle of a turn: load the context, route, run the chosen mode."""

from __future__ import annotations

from typing import Any

from fleet_rlm.config import ExecutionMode
from fleet_rlm.events import ContextLoaded, RouteDecision, Status
from fleet_rlm.runtime.context import load_context
from fleet_rlm.runtime.contracts import TurnRequest
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.rlm_mode import RLMOutcome, run_rlm
from fleet_rlm.runtime.router import route
from fleet_rlm.runtime.scope import TurnScope
from fleet_rlm.runtime.simple_modes import run_direct, run_tools

SOURCE_EVENT_KIND = {"text": "text", "file": "file", "url": "url", "repo": "repository", "path": "workspace"}


def execute_turn(
    scope: TurnScope, emitter: Emitter, request: TurnRequest, history: str
) -> tuple[RLMOutcome, ExecutionMode]:
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
