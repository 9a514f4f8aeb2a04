"""Live progress of an optimization run, fed by GEPA's callbacks (iteration, best score, metric calls)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

Phase = Literal["queued", "baseline", "optimizing", "validating", "saving", "done"]


@dataclass
class OptimizationProgress:
    """Where an optimization run is (phase, GEPA iteration, metric calls, scores); stored on the run row."""

    phase: Phase = "queued"
    iteration: int = 0
    metric_calls: int = 0
    max_metric_calls: int | None = None
    best_score: float | None = None
    baseline_score: float | None = None
    candidates: int = 0
    evaluated: int = 0
    total: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


ProgressSink = Callable[[OptimizationProgress], None]


class ProgressTracker:
    """Owns the OptimizationProgress and reports a copy on every change (thread-safe: GEPA evaluates on threads)."""

    def __init__(self, sink: ProgressSink | None = None) -> None:
        self.progress = OptimizationProgress()
        self._sink = sink
        self._lock = threading.Lock()

    def update(self, **changes: Any) -> None:
        with self._lock:
            for key, value in changes.items():
                setattr(self.progress, key, value)
            snapshot = OptimizationProgress(**asdict(self.progress))
        if self._sink is not None:
            self._sink(snapshot)


class GEPAProgress:
    """A GEPA callback (gepa.core.callbacks protocol; methods are looked up by name) updating the tracker."""

    def __init__(self, tracker: ProgressTracker) -> None:
        self.tracker = tracker

    def on_optimization_start(self, event: Any) -> None:
        self.tracker.update(phase="optimizing")

    def on_iteration_start(self, event: Any) -> None:
        self.tracker.update(iteration=int(event["iteration"]))

    def on_budget_updated(self, event: Any) -> None:
        used, remaining = int(event["metric_calls_used"]), event.get("metric_calls_remaining")
        total = used + int(remaining) if remaining is not None else None
        self.tracker.update(metric_calls=used, max_metric_calls=total)

    def on_valset_evaluated(self, event: Any) -> None:
        score = float(event["average_score"])
        best = self.tracker.progress.best_score
        if best is None or score > best:
            self.tracker.update(best_score=score)

    def on_candidate_accepted(self, event: Any) -> None:
        self.tracker.update(candidates=self.tracker.progress.candidates + 1)
