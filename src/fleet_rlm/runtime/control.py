"""`TurnControl`: the one object a turn and all its children share to know whether to keep going.

It joins the caller's CancelToken, the shared LM-call counter, the wall-clock deadline and the token/cost
ceilings of the turn's `TurnBudgets` (`limits`). The first reason to stop wins and is kept (`stop`); every
later check raises it again, so the whole tree (root, children, batched calls) unwinds. Blocked work
registers an interrupt (`on_stop`): the sandbox cell gets an interrupt, waiting LM calls return at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from fleet_rlm.budgets import TurnBudgets
from fleet_rlm.runtime.contracts import CancelToken
from fleet_rlm.runtime.errors import BudgetStop, CancelledStop, TurnStop

UsageProbe = Callable[[], tuple[int, float]]
"""Returns (tokens in+out, cost in USD) used so far by the turn."""


class TurnControl:
    def __init__(self, limits: TurnBudgets, cancel: CancelToken, *, usage: UsageProbe | None = None) -> None:
        self.limits = limits
        self.cancel = cancel
        self._usage = usage
        self._lock = threading.Lock()
        self._llm_calls = 0
        self._iterations = 0
        self._stop: TurnStop | None = None
        self._stopped = threading.Event()
        self._callbacks: list[Callable[[], None]] = []
        self.started = time.monotonic()
        self.deadline = self.started + limits.turn_timeout_s
        self._unregister_cancel = cancel.on_cancel(self._cancelled)
        self._timer = threading.Timer(limits.turn_timeout_s, self._expire)
        self._timer.daemon = True
        self._timer.start()

    # --- state ---------------------------------------------------------------------------------------------
    @property
    def stop(self) -> TurnStop | None:
        return self._stop

    @property
    def stopped(self) -> threading.Event:
        return self._stopped

    @property
    def llm_calls(self) -> int:
        return self._llm_calls

    @property
    def iterations(self) -> int:
        return self._iterations

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    # --- stopping ------------------------------------------------------------------------------------------
    def stop_with(self, stop: TurnStop) -> TurnStop:
        """Record the first reason to stop and fire every interrupt; returns the reason that won."""
        with self._lock:
            if self._stop is None:
                self._stop = stop
                self._stopped.set()
                callbacks = list(self._callbacks)
            else:
                callbacks = []
            winner = self._stop
        for callback in callbacks:
            try:
                callback()
            except Exception:
                pass
        return winner

    def on_stop(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run `callback` when the turn stops (at once if it has). Returns an unregister function."""
        with self._lock:
            if self._stop is None:
                self._callbacks.append(callback)

                def remove() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return remove
        callback()
        return lambda: None

    def _cancelled(self) -> None:
        self.stop_with(CancelledStop(self.cancel.reason))

    def _expire(self) -> None:
        limit = self.limits.turn_timeout_s
        self.stop_with(BudgetStop("turn_timeout_s", limit, round(time.monotonic() - self.started, 3)))

    def check(self) -> None:
        """Raise the turn's stop reason if there is one; also enforces the token and cost ceilings."""
        if self._stop is not None:
            raise self._stop
        if self._usage is not None and (self.limits.max_tokens or self.limits.max_cost_usd):
            tokens, cost = self._usage()
            if self.limits.max_tokens and tokens >= self.limits.max_tokens:
                raise self.stop_with(BudgetStop("max_tokens", self.limits.max_tokens, tokens))
            if self.limits.max_cost_usd and cost >= self.limits.max_cost_usd:
                raise self.stop_with(BudgetStop("max_cost_usd", self.limits.max_cost_usd, cost))

    def reserve_llm_calls(self, n: int = 1) -> None:
        """Count `n` LM calls against the shared budget, or stop the turn when it would be exceeded."""
        self.check()
        with self._lock:
            limit = self.limits.max_llm_calls
            if self._llm_calls + n <= limit:
                self._llm_calls += n
                return
            used = self._llm_calls
        raise self.stop_with(BudgetStop("max_llm_calls", limit, used))

    def remaining_llm_calls(self) -> int:
        with self._lock:
            return max(self.limits.max_llm_calls - self._llm_calls, 0)

    def count_iteration(self) -> int:
        with self._lock:
            self._iterations += 1
            return self._iterations

    def close(self) -> None:
        self._timer.cancel()
        self._unregister_cancel()
