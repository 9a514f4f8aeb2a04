"""Run benchmark tasks with bounded concurrency, resumable from a results file keyed by task id.

Each finished task is appended to `<results>.jsonl` at once (one JSON line per task), so an interrupted
bench resumes where it stopped: tasks whose id is already in the file are not run again. A task that
raises is recorded as a failure with score 0 (the bench goes on).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from fleet_rlm.bench.types import BenchTask, RunTask, TaskOutcome, TaskResult

Scorer = Callable[[BenchTask, str], float]


@dataclass
class BenchProgress:
    total: int
    done: int = 0
    skipped: int = 0
    score_sum: float = 0.0


def load_results(path: Path) -> dict[str, TaskResult]:
    """Results already recorded (a truncated last line from a crash is ignored)."""
    found: dict[str, TaskResult] = {}
    if not path.is_file():
        return found
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            result = TaskResult.from_dict(json.loads(line))
        except (ValueError, KeyError, TypeError):
            continue
        found[result.task_id] = result
    return found


def run_one(task: BenchTask, run_task: RunTask, scorer: Scorer) -> TaskResult:
    started = time.monotonic()
    try:
        outcome = run_task(task.prompt, task.context)
    except Exception as exc:
        outcome = TaskOutcome(
            answer="", seconds=time.monotonic() - started, status="failed", error=f"{type(exc).__name__}: {exc}"
        )
    score = scorer(task, outcome.answer) if outcome.status == "succeeded" else 0.0
    return TaskResult(task.id, task.suite, score, task.expected, outcome, dict(task.meta))


def run_bench(
    tasks: list[BenchTask],
    run_task: RunTask,
    scorer: Scorer,
    *,
    results_path: Path,
    concurrency: int = 1,
    on_progress: Callable[[BenchProgress, TaskResult | None], None] | None = None,
) -> list[TaskResult]:
    """Results for every task, in task order (recorded ones reused, the rest run and appended)."""
    results_path.parent.mkdir(parents=True, exist_ok=True)
    recorded = load_results(results_path)
    progress = BenchProgress(total=len(tasks))
    lock = threading.Lock()
    todo = [task for task in tasks if task.id not in recorded]
    progress.skipped = len(tasks) - len(todo)
    progress.done = progress.skipped
    progress.score_sum = sum(recorded[t.id].score for t in tasks if t.id in recorded)
    if on_progress is not None:
        on_progress(progress, None)

    def work(task: BenchTask) -> TaskResult:
        result = run_one(task, run_task, scorer)
        with lock:
            with results_path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
            recorded[task.id] = result
            progress.done += 1
            progress.score_sum += result.score
            if on_progress is not None:
                on_progress(progress, result)
        return result

    if concurrency <= 1:
        for task in todo:
            work(task)
    else:
        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="bench") as pool:
            list(pool.map(work, todo))
    return [recorded[task.id] for task in tasks]
