"""A scripted turn runtime (the runtime contract, no LM) and a real server running it, for CLI tests.

The real app (routes, store, recorder, SSE, cancellation) runs under uvicorn; only the turn runtime is a
scripted implementation of `run_turn(request, sink, token)` emitting real event models. Tasks select the
script: "slow ..." waits for a cancel, "fail ..." fails, anything else runs a full RLM-shaped trace.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fleet_rlm.api.app import create_app
from fleet_rlm.cli.inprocess import EmbeddedServer
from fleet_rlm.config import Settings
from fleet_rlm.events import (
    ChildEnd,
    ChildStart,
    Code,
    Final,
    Output,
    Reasoning,
    RouteDecision,
    Status,
    SubLMEnd,
    SubLMStart,
    TurnStarted,
    Usage,
)
from fleet_rlm.runtime.contracts import CancelToken, TurnRequest, TurnResult

USAGE = {"tokens_in": 120, "tokens_out": 30, "cost_usd": 0.0, "lm_calls": 4}


def answer_for(request: TurnRequest) -> str:
    return f"answer {len(request.history) + 1}: {request.task}"


class ScriptedRuntime:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.requests: list[TurnRequest] = []

    def prepare(self, session_id: str, workspace_id: str) -> None:
        """No sandboxes: nothing to start."""

    def end_session(self, session_id: str) -> None:
        """No sandboxes: nothing to close."""

    def shutdown(self) -> None:
        """Nothing held."""

    def run_turn(self, request: TurnRequest, sink: Any, token: CancelToken) -> TurnResult:
        self.requests.append(request)
        env = {"run_id": request.run_id, "session_id": request.session_id}
        sink.emit(TurnStarted(**env, input_preview=request.task[:50]))
        sink.emit(RouteDecision(**env, mode="rlm", reason="scripted"))
        if request.task.startswith("slow"):
            sink.emit(Status(**env, message="thinking slowly"))
            self.started.set()
            if token.wait(20):
                return TurnResult(status="cancelled")
            return TurnResult(status="failed", error={"code": "not_cancelled", "message": "nobody cancelled"})
        if request.task.startswith("fail"):
            return TurnResult(
                status="failed", error={"code": "lm_auth_failed", "message": "bad key", "action": "fix the key"}
            )
        for event in self._trace(env):
            sink.emit(event)
        answer = answer_for(request)
        sink.emit(Usage(**env, **USAGE))
        sink.emit(Final(**env, answer=answer))
        return TurnResult(status="succeeded", answer=answer, usage=USAGE, execution_mode="rlm")

    def _trace(self, env: dict[str, Any]) -> list[Any]:
        child = {**env, "depth": 1, "actor": "child:c1", "parent_id": "c1"}
        return [
            Reasoning(**env, text="Look at the context first.", iteration=1),
            Code(**env, code="print(len(context))\nprint('done')", iteration=1),
            Output(**env, stream="stdout", text="42\ndone\n", iteration=1),
            SubLMStart(**env, call_id="a", model="fake", batch_id="b1", batch_index=0, batch_size=2),
            SubLMStart(**env, call_id="b", model="fake", batch_id="b1", batch_index=1, batch_size=2),
            SubLMEnd(**env, call_id="a", ok=True),
            SubLMEnd(**env, call_id="b", ok=True),
            ChildStart(**env, child_id="c1", task_preview="summarise part one", child_depth=1),
            Code(**child, code="print('child')", iteration=1),
            ChildEnd(**env, child_id="c1", ok=True, answer_preview="part one is short"),
        ]


@contextmanager
def scripted_server(settings: Settings) -> Iterator[tuple[str, ScriptedRuntime]]:
    """The real app with a scripted runtime, on an ephemeral loopback port."""
    runtime = ScriptedRuntime()
    settings = settings.model_copy(update={"lm_model": "openai/scripted"})
    app = create_app(settings, runtime=runtime)
    server = EmbeddedServer(settings, app)
    try:
        yield server.start(), runtime
    finally:
        server.stop()
