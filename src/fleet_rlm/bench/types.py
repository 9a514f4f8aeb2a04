"""The benchmark vocabulary: a task, what running it produced, and its scored result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class BenchTask:
    """One question over one context; `expected` is what the scorer compares against."""

    id: str
    suite: str
    prompt: str
    context: str
    expected: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskOutcome:
    """What one run of a task produced (a turn: its answer, usage and timing)."""

    answer: str
    seconds: float
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    lm_calls: int = 0
    iterations: int = 0
    run_id: str | None = None
    status: str = "succeeded"
    error: str | None = None


RunTask = Callable[[str, str], TaskOutcome]
"""(prompt, context) -> TaskOutcome; the harness calls it from worker threads."""


@dataclass(frozen=True)
class TaskResult:
    task_id: str
    suite: str
    score: float
    expected: str
    outcome: TaskOutcome
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskResult:
        return cls(
            task_id=data["task_id"],
            suite=data["suite"],
            score=float(data["score"]),
            expected=data["expected"],
            outcome=TaskOutcome(**data["outcome"]),
            meta=dict(data.get("meta") or {}),
        )
