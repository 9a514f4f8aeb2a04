"""Bridge DSPy callbacks into events for one actor (root or a child): reasoning of each predictor step, host
tool calls (ReAct tools, tools called from REPL code) as tool_call/tool_result, and every LM call as lm_call.

An lm_call needs what two callbacks see: this one (the actor, the prompt, the response) and the LM's own
UsageCallback (tokens, cost), which runs after it. So the turn's meter listener finishes the event: it finds
the actor's EventCallback in the calling context (`actor_callback`) and hands it the meter's record.

Installed per actor with `dspy.context(callbacks=[...])`, never globally: turns run concurrently in threads
and children run inside their parent's tool calls.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback

from fleet_rlm.events import LMCall, Reasoning, ToolCall, ToolResult, preview
from fleet_rlm.llm.usage import LMCallRecord
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.latest_step import LatestStep

SILENT_TOOLS = frozenset({"finish"})
"""ReAct's built-in `finish` is a control signal, not a tool the user cares about."""
LM_PREVIEW_CHARS = 500

SUB_CALL: ContextVar[str | None] = ContextVar("fleet_sub_call", default=None)
"""call_id of the llm_query whose model call runs in this context (SubLM sets it around the call)."""


@dataclass
class _LMStart:
    prompt: str = ""
    sub_call_id: str | None = None
    iteration: int = 0
    response: str = ""


def _field(outputs: Any, name: str) -> Any:
    if outputs is None:
        return None
    getter = getattr(outputs, "get", None)
    if callable(getter):
        try:
            return getter(name)
        except Exception:
            return None
    return getattr(outputs, name, None)


class EventCallback(BaseCallback):
    def __init__(
        self,
        emitter: Emitter,
        *,
        iteration: Callable[[], int] | None = None,
        progress: LatestStep | None = None,
        lm_iteration: Callable[[], int] | None = None,
    ) -> None:
        self.emitter = emitter
        self.progress = progress
        self.iteration = iteration or (lambda: 0)
        self.lm_iteration = lm_iteration  # side-effect free: the RLM step a model call generates
        self._lock = threading.Lock()
        self._predicts: set[str] = set()
        self._tools: dict[str, tuple[str, float]] = {}
        self._lms: dict[str, _LMStart] = {}

    # --- LM calls --------------------------------------------------------------------------------------------
    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        sub = SUB_CALL.get()
        iteration = self.lm_iteration() if sub is None and self.lm_iteration is not None else 0
        with self._lock:
            self._lms[call_id] = _LMStart(_prompt_text(inputs), sub, iteration)

    def on_lm_end(self, call_id: str, outputs: Any, exception: BaseException | None = None) -> None:
        with self._lock:
            entry = self._lms.get(call_id)
            if entry is not None and exception is None:
                entry.response = _output_text(outputs)

    def lm_finished(self, record: LMCallRecord) -> None:
        """The meter recorded this call (after on_lm_end): emit its lm_call event."""
        with self._lock:
            entry = self._lms.pop(record.call_id, None)
        emit_lm_call(self.emitter, record, entry)

    # --- predictor steps -------------------------------------------------------------------------------------
    def on_module_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        if isinstance(instance, dspy.Predict):
            with self._lock:
                self._predicts.add(call_id)

    def on_module_end(self, call_id: str, outputs: Any, exception: BaseException | None = None) -> None:
        with self._lock:
            if call_id not in self._predicts:
                return
            self._predicts.discard(call_id)
        if exception is not None:
            return
        text = _field(outputs, "reasoning") or _field(outputs, "next_thought")
        if isinstance(text, str) and text.strip():
            if self.progress is not None:
                self.progress.note(reasoning=text)
            self.emitter.emit(Reasoning, text=text, iteration=self.iteration())

    # --- host tools ------------------------------------------------------------------------------------------
    def on_tool_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        name = str(getattr(instance, "name", "tool"))
        if name in SILENT_TOOLS:
            return
        with self._lock:
            self._tools[call_id] = (name, time.monotonic())
        kwargs = inputs.get("kwargs")
        args: dict[str, Any] = kwargs if isinstance(kwargs, dict) else inputs
        self.emitter.emit(ToolCall, call_id=call_id, name=name, args=_short_args(args))

    def on_tool_end(self, call_id: str, outputs: Any, exception: BaseException | None = None) -> None:
        with self._lock:
            entry = self._tools.pop(call_id, None)
        if entry is None:
            return
        name, started = entry
        self.emitter.emit(
            ToolResult,
            call_id=call_id,
            name=name,
            ok=exception is None,
            result_preview=preview(str(outputs), 1000) if exception is None else "",
            error=None if exception is None else f"{type(exception).__name__}: {exception}"[:1000],
            latency_ms=int((time.monotonic() - started) * 1000),
        )


def actor_callback() -> EventCallback | None:
    """The EventCallback of the actor whose `dspy.context(callbacks=[...])` this code runs in, if any."""
    for callback in dspy.settings.get("callbacks") or []:
        if isinstance(callback, EventCallback):
            return callback
    return None


def emit_lm_call(emitter: Emitter, record: LMCallRecord, start: _LMStart | None = None) -> None:
    start = start or _LMStart()
    error = None if record.error is None else f"{type(record.error).__name__}: {record.error}"[:500]
    emitter.emit(
        LMCall,
        call_id=record.call_id,
        role=record.role,
        model=record.model,
        ok=record.ok,
        latency_ms=record.latency_ms,
        tokens_in=record.tokens_in,
        tokens_out=record.tokens_out,
        cost_usd=record.cost_usd,
        cached=record.cached,
        iteration=start.iteration,
        sub_call_id=start.sub_call_id,
        prompt_preview=preview(start.prompt, LM_PREVIEW_CHARS),
        response_preview=preview(start.response, LM_PREVIEW_CHARS),
        error=error,
    )


def _prompt_text(inputs: dict[str, Any]) -> str:
    """The newest message of an LM call's prompt (the part that changes from call to call)."""
    messages = inputs.get("messages")
    if isinstance(messages, list) and messages and isinstance(messages[-1], dict):
        body = messages[-1].get("content")
        if isinstance(body, list):  # content parts
            return " ".join(str(p.get("text", "")) for p in body if isinstance(p, dict))
        return str(body or "")
    prompt = inputs.get("prompt")
    return prompt if isinstance(prompt, str) else ""


def _output_text(outputs: Any) -> str:
    if isinstance(outputs, list) and outputs:
        first = outputs[0]
        value = first.get("text") if isinstance(first, dict) else first
        return value if isinstance(value, str) else ""
    text = getattr(outputs, "text", None)
    return text if isinstance(text, str) else ""


def _short_args(args: dict[str, Any]) -> dict[str, Any]:
    return {k: preview(v, 500) if isinstance(v, str) else v for k, v in args.items()}
