"""Host implementations of `llm_query` and `llm_query_batched` for REPL code, with sub_lm_start/end events.

They replace the ones dspy.RLM generates (the interpreter decorator installs them) so each prompt of a batch is
an event with its batch index and latency, every call counts against the turn's shared budget, and a cancel
returns at once instead of waiting for slow providers.
"""

from __future__ import annotations

import contextvars
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import dspy

from fleet_rlm.events import SubLMEnd, SubLMStart, preview
from fleet_rlm.runtime.callbacks import SUB_CALL
from fleet_rlm.runtime.control import TurnControl
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.errors import TurnStop
from fleet_rlm.runtime.guarded_lm import run_interruptible


def response_text(response: Any) -> str:
    """Text of an LM call's result (a list of strings/dicts, or an lm15 Response)."""
    text = getattr(response, "text", None)
    if isinstance(text, str):
        return text
    if isinstance(response, list) and response:
        first = response[0]
        value = first.get("text") if isinstance(first, dict) else first
        if isinstance(value, str):
            return value
    raise TypeError(f"the sub-LM returned {type(response).__name__}, not text")


class SubLM:
    """llm_query / llm_query_batched bound to one actor (root or a child)."""

    def __init__(self, lm: dspy.BaseLM, control: TurnControl, emitter: Emitter, *, role: str = "sub") -> None:
        self.lm = lm
        self.control = control
        self.emitter = emitter
        self.role = role

    def query(self, prompt: str, *, batch: tuple[str, int, int] | None = None) -> str:
        if not isinstance(prompt, str) or not prompt:
            raise ValueError("prompt must be a non-empty string")
        if batch is None:
            self.control.reserve_llm_calls(1)
        call_id = uuid.uuid4().hex
        batch_id, index, size = batch if batch else (None, None, None)
        self.emitter.emit(
            SubLMStart,
            call_id=call_id,
            model=str(getattr(self.lm, "model", "")),
            role=self.role,
            prompt_preview=preview(prompt, 500),
            batch_id=batch_id,
            batch_index=index,
            batch_size=size,
        )
        started = time.monotonic()
        token = SUB_CALL.set(call_id)  # the model call's lm_call event names this llm_query
        try:
            text = response_text(run_interruptible(lambda: self._call(prompt), self.control))
        except BaseException as exc:
            self.emitter.emit(
                SubLMEnd,
                call_id=call_id,
                ok=False,
                latency_ms=int((time.monotonic() - started) * 1000),
                error=f"{type(exc).__name__}: {exc}"[:500] if not isinstance(exc, TurnStop) else str(exc),
            )
            raise
        finally:
            SUB_CALL.reset(token)
        self.emitter.emit(
            SubLMEnd,
            call_id=call_id,
            ok=True,
            latency_ms=int((time.monotonic() - started) * 1000),
            response_preview=preview(text, 500),
        )
        return text

    def _call(self, prompt: str) -> Any:
        inner = getattr(self.lm, "inner", self.lm)  # budget already reserved: skip GuardedLM's own count
        return inner(prompt)

    def query_batched(self, prompts: list[str]) -> list[str]:
        if not isinstance(prompts, list) or not all(isinstance(p, str) and p for p in prompts):
            raise TypeError("llm_query_batched expects a list of non-empty prompt strings")
        if not prompts:
            return []
        self.control.reserve_llm_calls(len(prompts))
        batch_id = uuid.uuid4().hex
        workers = max(1, min(self.control.limits.batch_concurrency, len(prompts)))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sub-lm-batch")
        try:
            futures = [
                pool.submit(contextvars.copy_context().run, self._one, p, (batch_id, i, len(prompts)))
                for i, p in enumerate(prompts)
            ]
            return [f.result() for f in futures]
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    def _one(self, prompt: str, batch: tuple[str, int, int]) -> str:
        try:
            return self.query(prompt, batch=batch)
        except TurnStop:
            raise
        except Exception as exc:  # one failed prompt does not sink the batch (dspy's behaviour too)
            return f"[ERROR] {type(exc).__name__}: {exc}"

    def tools(self) -> dict[str, Any]:
        def llm_query(prompt: str) -> str:
            """Query a sub-LLM with one prompt; returns its text."""
            return self.query(prompt)

        def llm_query_batched(prompts: list[str]) -> list[str]:
            """Query several prompts concurrently; returns the texts in order."""
            return self.query_batched(prompts)

        return {"llm_query": llm_query, "llm_query_batched": llm_query_batched}
