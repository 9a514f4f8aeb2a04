"""One GEPA optimization of a module: baseline on validation, dspy.GEPA, optimized on validation.

Blocking (run it on a worker thread). Progress goes to a ProgressTracker; a cancel request stops GEPA at its
next iteration boundary (a GEPA stop callback) and skips the final evaluation. The reflection model is the
`reflection` role's LM from the injected provider.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Literal

import dspy

from fleet_rlm.errors import FleetError, InvalidInput
from fleet_rlm.optimize.evaluate import ExampleResult, evaluate_rows, mean_score
from fleet_rlm.optimize.metrics import gepa_metric
from fleet_rlm.optimize.modules import BuildContext, OptimizableModule
from fleet_rlm.optimize.progress import GEPAProgress, ProgressTracker

log = logging.getLogger(__name__)
Auto = Literal["light", "medium", "heavy"]


@dataclass(frozen=True)
class GEPAConfig:
    """Budget: exactly one of `auto` or `max_metric_calls` (defaults to auto=light)."""

    auto: Auto | None = None
    max_metric_calls: int | None = None
    seed: int = 0
    reflection_minibatch_size: int = 3
    threads: int = 1
    use_merge: bool = False

    def budget(self) -> dict[str, Any]:
        if self.auto is not None and self.max_metric_calls is not None:
            raise InvalidInput(
                "give either an auto budget or max_metric_calls, not both",
                code="optimization_budget_invalid",
            )
        if self.max_metric_calls is not None:
            if self.max_metric_calls < 1:
                raise InvalidInput(
                    "max_metric_calls must be at least 1",
                    code="optimization_budget_invalid",
                )
            return {"max_metric_calls": self.max_metric_calls}
        return {"auto": self.auto or "light"}


@dataclass
class GEPAOutcome:
    status: Literal["succeeded", "cancelled"]
    baseline: list[ExampleResult]
    optimized: list[ExampleResult]
    instructions_before: dict[str, str]
    instructions_after: dict[str, str]
    state: dict[str, Any] = field(default_factory=dict)
    metric_calls: int = 0
    iterations: int = 0

    @property
    def baseline_score(self) -> float:
        return mean_score(self.baseline)

    @property
    def optimized_score(self) -> float | None:
        return mean_score(self.optimized) if self.optimized else None


def instructions_of(program: dspy.Module) -> dict[str, str]:
    return {name: str(predictor.signature.instructions) for name, predictor in program.named_predictors()}


class _Stopper:
    """Stops GEPA at an iteration boundary on cancel, or when the next iteration could overrun the budget."""

    def __init__(self, cancel: threading.Event, budget: _MetricBudget | None = None, worst_iteration: int = 0) -> None:
        self.cancel = cancel
        self.budget = budget
        self.worst_iteration = worst_iteration

    def __call__(self, gepa_state: Any) -> bool:
        if self.cancel.is_set():
            return True
        return self.budget is not None and self.budget.used + self.worst_iteration > self.budget.limit


class _MetricBudget:
    """`max_metric_calls` as a ceiling. GEPA checks its budget only between iterations, and one iteration
    scores minibatches three times plus (on improvement) the whole validation set, so it overshoots (12 -> 15). The
    stopper refuses to start an iteration that could pass the limit; past it, the metric itself refuses (the
    call scores 0 without evaluating), so the count never exceeds the budget."""

    def __init__(self, limit: int, metric: Any) -> None:
        self.limit = limit
        self.used = 0
        self._metric = metric
        self._lock = threading.Lock()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            allowed = self.used < self.limit
            self.used += int(allowed)
        if not allowed:
            return dspy.Prediction(score=0.0, feedback="metric budget exhausted; not evaluated")
        return self._metric(*args, **kwargs)


def run_gepa(
    module: OptimizableModule,
    ctx: BuildContext,
    *,
    train: list[dict[str, Any]],
    val: list[dict[str, Any]],
    config: GEPAConfig,
    tracker: ProgressTracker | None = None,
    cancel: threading.Event | None = None,
) -> GEPAOutcome:
    tracker = tracker or ProgressTracker()
    cancel = cancel or threading.Event()
    budget = config.budget()
    student = module.build(ctx)
    before = instructions_of(student)
    tracker.update(phase="baseline", total=len(val), evaluated=0)
    baseline = evaluate_rows(
        module,
        student,
        val,
        threads=config.threads,
        cancelled=cancel.is_set,
        on_done=lambda n: tracker.update(evaluated=n),
    )
    tracker.update(baseline_score=mean_score(baseline), best_score=mean_score(baseline))
    if cancel.is_set():
        return GEPAOutcome("cancelled", baseline, [], before, before)
    callback = GEPAProgress(tracker)
    metric: Any = gepa_metric(module.metric)
    ceiling: _MetricBudget | None = None
    if config.max_metric_calls is not None:
        ceiling = metric = _MetricBudget(config.max_metric_calls, metric)
    # one iteration, measured: the parent's minibatch twice (with traces, then scored), the proposal's, the valset
    worst = 3 * min(config.reflection_minibatch_size, len(train)) + len(val) * (2 if config.use_merge else 1)
    optimizer = dspy.GEPA(
        metric=metric,
        reflection_lm=ctx.lms("reflection"),
        reflection_minibatch_size=config.reflection_minibatch_size,
        num_threads=config.threads,
        use_merge=config.use_merge,
        seed=config.seed,
        track_stats=False,
        gepa_kwargs={"callbacks": [callback], "stop_callbacks": [_Stopper(cancel, ceiling, worst)]},
        **budget,
    )
    tracker.update(phase="optimizing")
    try:
        optimized_program = optimizer.compile(
            student, trainset=[module.example(r) for r in train], valset=[module.example(r) for r in val]
        )
    except FleetError:
        raise
    except Exception as exc:
        log.warning("GEPA failed for module %s", module.name, exc_info=exc)
        raise FleetError(
            f"GEPA failed: {type(exc).__name__}: {exc}",
            code="optimization_failed",
            action="check the reflection and root models (fleet-rlm doctor) and the dataset, then retry",
        ) from exc
    after = instructions_of(optimized_program)
    metric_calls = ceiling.used if ceiling is not None else tracker.progress.metric_calls
    iterations = tracker.progress.iteration
    if cancel.is_set():
        return GEPAOutcome("cancelled", baseline, [], before, after, metric_calls=metric_calls, iterations=iterations)
    tracker.update(phase="validating", evaluated=0, total=len(val))
    optimized = evaluate_rows(
        module,
        optimized_program,
        val,
        threads=config.threads,
        cancelled=cancel.is_set,
        on_done=lambda n: tracker.update(evaluated=n),
    )
    status: Literal["succeeded", "cancelled"] = "cancelled" if cancel.is_set() else "succeeded"
    return GEPAOutcome(
        status,
        baseline,
        optimized,
        before,
        after,
        state=_state(optimized_program),
        metric_calls=metric_calls,
        iterations=iterations,
    )


def _state(program: dspy.Module) -> dict[str, Any]:
    """DSPy's saved state of the optimized program (JSON-safe), so it can be loaded with `load_state`."""
    try:
        state: dict[str, Any] = program.dump_state()
    except Exception as exc:  # a program whose state cannot be dumped still yields its instructions
        return {"error": f"could not dump state: {exc}"}
    import json

    return json.loads(json.dumps(state, default=str))
