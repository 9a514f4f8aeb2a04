"""Running capability benchmark tasks as real turns through the API, with a progress bar and a results table.

Kept apart from the `bench` commands so that building the CLI never imports the benchmark generators.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from fleet_rlm.bench import BenchProgress, BenchTask, TaskOutcome, TaskResult, run_bench
from fleet_rlm.bench.summary import summarize
from fleet_rlm.bench.types import RunTask
from fleet_rlm.cli.client import FleetClient, StreamState
from fleet_rlm.cli.connect import open_client
from fleet_rlm.cli.tables import print_table


def api_run_task(client: FleetClient, *, mode: str) -> RunTask:
    """Run one task as a turn: a new session, the context uploaded as an attachment, the prompt as the message."""

    def run(prompt: str, context: str) -> TaskOutcome:
        started = time.monotonic()
        session = client.create_session(title=f"bench: {prompt[:60]}")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "context.txt"
            path.write_text(context, encoding="utf-8")
            attachment = client.upload_file(path, session_id=session["id"])
        body = {"content": prompt, "execution_mode": mode, "attachment_ids": [attachment["id"]]}
        state = StreamState()
        answer = ""
        for event in client.start_turn(session["id"], body, state):
            if event.type == "final":
                answer = str(getattr(event, "answer", ""))
        run = client.get_run(state.run_id) if state.run_id else {}
        usage: dict[str, Any] = run.get("usage") or {}
        error = run.get("error") or {}
        return TaskOutcome(
            answer=answer,
            seconds=round(time.monotonic() - started, 3),
            tokens_in=int(usage.get("tokens_in", 0)),
            tokens_out=int(usage.get("tokens_out", 0)),
            cost_usd=float(usage.get("cost_usd", 0.0)),
            lm_calls=int(usage.get("lm_calls", 0)),
            iterations=int(usage.get("iterations", 0)),
            run_id=state.run_id,
            status=str(run.get("status", "failed")),
            error=error.get("message"),
        )

    return run


RESULT_COLUMNS = ("group", "tasks", "score", "cost $", "tokens", "LM calls", "iters", "s/task", "failed", "paper")


def results_rows(results: list[TaskResult]) -> list[list[str]]:
    return [
        [
            row.group,
            str(row.tasks),
            f"{row.score:.3f}",
            f"{row.cost_usd:.4f}",
            str(row.tokens),
            f"{row.lm_calls:g}",
            f"{row.iterations:g}",
            f"{row.seconds:.1f}",
            str(row.failed),
            row.reference,
        ]
        for row in summarize(results)
    ]


def execute(
    tasks: list[BenchTask],
    scorer: Callable[[BenchTask, str], float],
    *,
    results_path: Path,
    mode: str,
    concurrency: int,
    url_server: str | None,
) -> list[TaskResult]:
    console = Console(stderr=True)
    with (
        open_client(url_server) as client,
        Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
        ) as bar,
    ):
        handle = bar.add_task("running", total=len(tasks))

        def on_progress(progress: BenchProgress, _result: TaskResult | None) -> None:
            mean = progress.score_sum / progress.done if progress.done else 0.0
            bar.update(handle, completed=progress.done, description=f"score {mean:.3f}")

        results = run_bench(
            tasks,
            api_run_task(client, mode=mode),
            scorer,
            results_path=results_path,
            concurrency=concurrency,
            on_progress=on_progress,
        )
    summary_path = results_path.with_suffix(".summary.json")
    summary = {"results": str(results_path), "groups": [g.to_dict() for g in summarize(results)]}
    summary_path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print_table(RESULT_COLUMNS, results_rows(results), title="Benchmark results (means per task)")
    typer.echo(f"results: {results_path}\nsummary: {summary_path}", err=True)
    return results
