"""Bridge DSPy callbacks into events for one actor (root or a child): reasoning of each predictor step, and
host tool calls (ReAct tools, tools called from REPL code) as tool_call/tool_result.

Installed per actor with `dspy.context(callbacks=[...])`, never globally: turns run concurrently in threads
and children run inside their parent's tool calls.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback

from fleet_rlm.events import Reasoning, ToolCall, ToolResult, preview
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.progress import Progress

SILENT_TOOLS = frozenset({"finish"})
"""ReAct's built-in `finish` is a control signal, not a tool the user cares about."""


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
        self, emitter: Emitter, *, iteration: Callable[[], int] | None = None, progress: Progress | None = None
    ) -> None:
        self.emitter = emitter
        self.progress = progress
        self.iteration = iteration or (lambda: 0)
        self._lock = threading.Lock()
        self._predicts: set[str] = set()
        self._tools: dict[str, tuple[str, float]] = {}

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


def _short_args(args: dict[str, Any]) -> dict[str, Any]:
    return {k: preview(v, 500) if isinstance(v, str) else v for k, v in args.items()}
