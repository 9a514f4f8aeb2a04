"""The LMs of a resumed run: answers the run already received come from its own recording, the rest go live.

A run interrupted mid-turn (its worker or server died) continues from its last completed iteration
(services/turns/resume.py). Its earlier LM requests are made again exactly as before (the same prompts, the same
recorded cell outputs), so `ResumeLM` renders each request as `RecordingLM` does, and when the run's recording
holds that request (by hash, in recorded order, `ReplayBook`'s rule) it answers from there: no request reaches a
model twice and no cost is paid twice. Any other request goes to the caller's live LM. A recorded answer is not
recorded again (`SERVED_FROM_RECORDING` tells the `RecordingLM` above it), and new exchanges are numbered after
the recorded ones.
"""

from __future__ import annotations

import copy
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

import dspy
from dspy.utils.callback import with_callbacks

from fleet_rlm.runtime.lm_exchange import LMExchange, canonical_request, request_hash
from fleet_rlm.runtime.lm_wrapper import WrappedLM
from fleet_rlm.runtime.recording import SERVED_FROM_RECORDING


class RecordedAnswers:
    """The run's recorded exchanges with a stored response, consumed by request hash; thread-safe."""

    def __init__(self, exchanges: Iterable[LMExchange]) -> None:
        self._lock = threading.Lock()
        self._by_hash: dict[str, deque[LMExchange]] = {}
        for exchange in sorted(exchanges, key=lambda e: e.seq):
            if exchange.response is not None and exchange.error is None:
                self._by_hash.setdefault(exchange.request_hash, deque()).append(exchange)
        self.served = 0

    def take(self, request: dict[str, Any]) -> LMExchange | None:
        with self._lock:
            queue = self._by_hash.get(request_hash(request))
            if not queue:
                return None
            self.served += 1
            return queue.popleft()


class ResumeLM(WrappedLM):
    """The caller's LM, answering from the recording first."""

    def __init__(self, inner: dspy.BaseLM, answers: RecordedAnswers) -> None:
        super().__init__(inner)
        self.answers = answers

    @with_callbacks
    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        exchange = self.answers.take(canonical_request(self.inner, prompt, messages, kwargs))
        if exchange is None:
            return self.inner(prompt, messages=messages, **kwargs)
        SERVED_FROM_RECORDING.set(True)
        response = exchange.response or {}
        tracker = dspy.settings.get("usage_tracker")
        if tracker is not None and response.get("usage"):
            tracker.add_usage(self.model, dict(response["usage"]))
        return copy.deepcopy(response.get("outputs"))

    def copy(self, **kwargs: Any) -> ResumeLM:
        return ResumeLM(self.inner.copy(**kwargs), self.answers)


def resume_provider(live: Callable[[str], Any], exchanges: Iterable[LMExchange]) -> Callable[[str], Any]:
    """role -> the live LM of that role, answering the recorded requests from `exchanges` first."""
    answers = RecordedAnswers(exchanges)

    def provider(role: str) -> Any:
        return ResumeLM(live(role), answers)

    return provider
