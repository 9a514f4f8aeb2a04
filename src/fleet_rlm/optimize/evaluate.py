"""Evaluate a program on rows: per-example output, score and feedback (baseline and optimized alike)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import dspy

from fleet_rlm.optimize.metrics import Scored, prediction_fields
from fleet_rlm.optimize.modules import OptimizableModule

PREVIEW_CHARS = 400


@dataclass(frozen=True)
class ExampleResult:
    index: int
    inputs: dict[str, str]
    expected: dict[str, Any]
    output: dict[str, Any]
    score: float
    feedback: str
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _preview(value: Any) -> Any:
    if isinstance(value, str) and len(value) > PREVIEW_CHARS:
        return value[:PREVIEW_CHARS] + f"... ({len(value)} chars)"
    return value


def evaluate_rows(
    module: OptimizableModule,
    program: dspy.Module,
    rows: list[dict[str, Any]],
    *,
    threads: int = 1,
    cancelled: Callable[[], bool] = lambda: False,
    on_done: Callable[[int], None] | None = None,
) -> list[ExampleResult]:
    """Run `program` on every row; a failing example scores 0 with its error (it never aborts the rest)."""
    lock, done = threading.Lock(), [0]

    def one(index: int) -> ExampleResult:
        row = rows[index]
        inputs = module.inputs_of(row)
        expected = {key: row.get(key) for key in module.output_keys}
        if cancelled():
            return ExampleResult(index, {}, expected, {}, 0.0, "not run: cancelled", "cancelled")
        try:
            fields = prediction_fields(program(**inputs))
            scored = module.metric(expected, fields)
            error = None
        except Exception as exc:
            fields, scored, error = {}, Scored(0.0, f"the program failed: {exc}"), f"{type(exc).__name__}: {exc}"
        with lock:
            done[0] += 1
            count = done[0]
        if on_done is not None:
            on_done(count)
        shown = {k: _preview(v) for k, v in inputs.items()}
        output = {k: _preview(v) for k, v in fields.items()}
        return ExampleResult(index, shown, expected, output, scored.score, scored.feedback, error)

    if threads <= 1:
        return [one(i) for i in range(len(rows))]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(one, range(len(rows))))


def mean_score(results: list[ExampleResult]) -> float:
    return round(sum(r.score for r in results) / len(results), 4) if results else 0.0
