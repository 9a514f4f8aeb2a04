"""Per-role usage and cost of a run, captured from DSPy's own callback hooks (no patching of DSPy).

DSPy's `on_lm_end` receives only the LM's outputs, not its usage. What DSPy does expose is its usage-tracker
hook: for every call that reaches the provider (cache hits excluded) it calls
`dspy.settings.usage_tracker.add_usage(model, usage)` in the caller's context. So `on_lm_start` opens a
`dspy.context(usage_tracker=...)` that captures this call's usage (and forwards it to any tracker the user
had, so `dspy.track_usage()` keeps working), and `on_lm_end` closes it and records the call. Start, call and
end run in the same thread or task, so concurrent calls on one shared LM never mix their numbers.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback

from fleet_rlm.events import RoleUsage, UsageTotals
from fleet_rlm.llm.pricing import price
from fleet_rlm.llm.roles import Role


@dataclass(frozen=True, slots=True)
class LMCallRecord:
    """One finished LM call, as the meter saw it (listeners turn these into sub_lm_end events, budgets...)."""

    call_id: str
    role: str
    model: str
    tokens_in: int
    tokens_out: int
    cost_usd: float
    cost_known: bool
    latency_ms: int
    ok: bool
    cached: bool
    error: BaseException | None = None


@dataclass(slots=True)
class _RoleTotals:
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    cost_known: bool = True
    lm_calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    latency_ms: int = 0

    def snapshot(self) -> RoleUsage:
        return RoleUsage(
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            cost_usd=round(self.cost_usd, 10),
            cost_known=self.cost_known,
            lm_calls=self.lm_calls,
            cached_calls=self.cached_calls,
            failed_calls=self.failed_calls,
            latency_ms=self.latency_ms,
        )


def _tokens(usage: dict[str, Any]) -> tuple[int, int]:
    tokens_in = usage.get("prompt_tokens", usage.get("input_tokens")) or 0
    tokens_out = usage.get("completion_tokens", usage.get("output_tokens")) or 0
    return int(tokens_in), int(tokens_out)


class UsageMeter:
    """Thread-safe totals per role. Attach `callback(role)` to the dspy.LM of that role (build_lm does)."""

    def __init__(self, on_call: Callable[[LMCallRecord], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._roles: dict[str, _RoleTotals] = {}
        self._iterations = 0
        self._on_call = on_call

    def callback(self, role: Role | str, *, pricing_model: str | None = None) -> UsageCallback:
        """A DSPy callback recording that LM's calls under `role` (priced as `pricing_model` if given)."""
        return UsageCallback(self, role, pricing_model=pricing_model)

    def record(
        self,
        role: str,
        *,
        model: str,
        tokens_in: int = 0,
        tokens_out: int = 0,
        latency_ms: int = 0,
        ok: bool = True,
        cached: bool = False,
        pricing_model: str | None = None,
        call_id: str = "",
        error: BaseException | None = None,
    ) -> LMCallRecord:
        """Add one call (the callback uses this; callers may record calls made outside DSPy)."""
        cost = price(pricing_model or model, tokens_in, tokens_out)
        record = LMCallRecord(
            call_id, role, model, tokens_in, tokens_out, cost.cost_usd, cost.known, latency_ms, ok, cached, error
        )
        with self._lock:
            totals = self._roles.setdefault(role, _RoleTotals())
            totals.tokens_in += tokens_in
            totals.tokens_out += tokens_out
            totals.cost_usd += cost.cost_usd
            totals.cost_known = totals.cost_known and cost.known
            totals.lm_calls += 1
            totals.cached_calls += int(cached)
            totals.failed_calls += int(not ok)
            totals.latency_ms += latency_ms
        if self._on_call is not None:
            self._on_call(record)
        return record

    def add_iterations(self, count: int = 1) -> None:
        with self._lock:
            self._iterations += count

    @property
    def lm_calls(self) -> int:
        with self._lock:
            return sum(t.lm_calls for t in self._roles.values())

    def snapshot(self) -> UsageTotals:
        """Totals so far: the payload of a `usage` event."""
        with self._lock:
            by_role = {role: totals.snapshot() for role, totals in self._roles.items()}
            iterations = self._iterations
        return UsageTotals(
            tokens_in=sum(r.tokens_in for r in by_role.values()),
            tokens_out=sum(r.tokens_out for r in by_role.values()),
            cost_usd=round(sum(r.cost_usd for r in by_role.values()), 10),
            cost_known=all(r.cost_known for r in by_role.values()),
            lm_calls=sum(r.lm_calls for r in by_role.values()),
            iterations=iterations,
            by_role=by_role,
        )


class _CallCapture:
    """The usage tracker installed for the duration of one call."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous
        self.usage: dict[str, Any] = {}
        self.reported = False

    def add_usage(self, lm: str, usage_entry: dict[str, Any]) -> None:
        self.reported = True
        for key, value in (usage_entry or {}).items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                self.usage[key] = self.usage.get(key, 0) + value
        if self.previous is not None:
            self.previous.add_usage(lm, usage_entry)


@dataclass(slots=True)
class _Pending:
    capture: _CallCapture
    scope: AbstractContextManager[None]
    model: str
    started: float = field(default_factory=time.perf_counter)


class UsageCallback(BaseCallback):
    """Records each call of the LM it is attached to into a UsageMeter under one role."""

    def __init__(self, meter: UsageMeter, role: str, *, pricing_model: str | None = None) -> None:
        self.meter = meter
        self.role = role
        self.pricing_model = pricing_model
        self._pending: dict[str, _Pending] = {}
        self._lock = threading.Lock()

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        capture = _CallCapture(dspy.settings.get("usage_tracker"))
        scope = dspy.context(usage_tracker=capture)
        scope.__enter__()
        with self._lock:
            self._pending[call_id] = _Pending(capture, scope, str(getattr(instance, "model", "unknown")))

    def on_lm_end(self, call_id: str, outputs: Any, exception: BaseException | None = None) -> None:
        with self._lock:
            pending = self._pending.pop(call_id, None)
        if pending is None:
            return
        pending.scope.__exit__(None, None, None)
        tokens_in, tokens_out = _tokens(pending.capture.usage)
        self.meter.record(
            self.role,
            model=pending.model,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            # rounded up: a call that happened never reads 0 ms (its trace span would have no length)
            latency_ms=math.ceil((time.perf_counter() - pending.started) * 1000),
            ok=exception is None,
            cached=exception is None and not pending.capture.reported,
            pricing_model=self.pricing_model,
            call_id=call_id,
            error=exception,
        )
