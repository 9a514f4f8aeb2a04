"""`GuardedLM`: a turn's view of a `dspy.BaseLM` — counts every call against the shared budget and returns at
once when the turn stops, even while the provider request is still in flight.

Composition, not patching: it is itself a BaseLM whose `__call__` delegates to the real LM's `__call__` (so DSPy
callbacks, usage tracking and history fire exactly once, on the real LM) on a helper thread, while the caller
waits for the result *or* the turn's stop signal. An abandoned request finishes in the background; its result
is dropped.
"""

from __future__ import annotations

import _thread
import contextvars
from collections.abc import Callable
from typing import Any, TypeVar

import dspy

from fleet_rlm.runtime.control import TurnControl
from fleet_rlm.runtime.lm_wrapper import WrappedLM

T = TypeVar("T")


def run_interruptible(fn: Callable[[], T], control: TurnControl) -> T:
    """Run `fn` on a helper thread (in a copy of this context); raise the turn's stop as soon as it stops.

    A bare `_thread` and a lock, not `threading.Thread` and an Event: `Thread.start()` waits until the new
    thread has run, a hand-off of the GIL and back on every LM call, and an Event is a Condition over a lock.
    Under a burst (~25 turns a process) that cost ~1 ms of a turn process's CPU a turn (docs/performance.md).
    Nothing on an LM call's path asks `threading` for its current thread."""
    control.check()
    wake = _thread.allocate_lock()
    wake.acquire()
    box: dict[str, Any] = {}
    context = contextvars.copy_context()

    def release() -> None:
        try:
            wake.release()
        except RuntimeError:  # released already (the call ended and the turn stopped at once)
            pass

    def target() -> None:
        try:
            box["value"] = context.run(fn)
        except BaseException as exc:
            box["error"] = exc
        finally:
            release()

    _thread.start_new_thread(target, ())
    remove = control.on_stop(release)
    try:
        wake.acquire()
    finally:
        remove()
    if "error" in box:
        raise box["error"]
    if "value" not in box:  # woken by the stop signal
        control.check()
        raise RuntimeError("interrupted without a stop reason")  # unreachable: check() raised
    return box["value"]  # type: ignore[no-any-return]


class GuardedLM(WrappedLM):
    def __init__(self, inner: dspy.BaseLM, control: TurnControl, role: str) -> None:
        super().__init__(inner)
        self.control = control
        self.role = role

    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        self.control.reserve_llm_calls(1)
        result = run_interruptible(lambda: self.inner(prompt, messages=messages, **kwargs), self.control)
        self.control.check()  # token / cost ceilings include this call
        return result

    def copy(self, **kwargs: Any) -> GuardedLM:
        return GuardedLM(self.inner.copy(**kwargs), self.control, self.role)
