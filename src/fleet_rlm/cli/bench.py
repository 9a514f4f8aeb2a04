"""`fleet-rlm bench sniah|oolong`: capability benchmarks where every task is a real turn (persisted, visible in
the UI) run through the API, embedded or --url-server, with the configured models.

Results go to a JSONL file keyed by task id (rerun the same command to resume), a summary JSON beside it, and
a table on stdout with the papers' references alongside.
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
from rich.table import Table

from fleet_rlm.bench import BenchProgress, BenchTask, TaskOutcome, TaskResult, run_bench
from fleet_rlm.bench import oolong as oolong_suite
from fleet_rlm.bench import sniah as sniah_suite
from fleet_rlm.bench.summary import summarize
from fleet_rlm.bench.types import RunTask
from fleet_rlm.cli.chat import ServerOption
from fleet_rlm.cli.client import FleetClient, StreamState
from fleet_rlm.cli.connect import open_client
from fleet_rlm.cli.errors import guarded

bench_app = typer.Typer(help="Capability benchmarks (S-NIAH, OOLONG) run as real turns.", no_args_is_help=True)

ModeOption = typer.Option("rlm", "--mode", help="Execution mode of each task's turn: rlm, auto, tools or direct.")
ConcurrencyOption = typer.Option(1, "--concurrency", min=1, max=64, help="Tasks run at the same time.")
ResultsOption = typer.Option(None, "--results", help="Results JSONL (default: bench-results/<suite>-<params>.jsonl).")


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


def results_table(results: list[TaskResult]) -> Table:
    table = Table(title="Benchmark results (means per task)")
    for column in ("group", "tasks", "score", "cost $", "tokens", "LM calls", "iters", "s/task", "failed", "paper"):
        table.add_column(column, overflow="fold")
    for row in summarize(results):
        table.add_row(
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
        )
    return table


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
    Console().print(results_table(results))
    typer.echo(f"results: {results_path}\nsummary: {summary_path}", err=True)
    return results


@bench_app.command("sniah")
def sniah(
    lengths: str = typer.Option("8k,32k,128k,1m", "--lengths", help="Haystack sizes in tokens (~4 chars each)."),
    tasks: int = typer.Option(50, "--tasks", min=1, help="Tasks per length (needle depths spread over 0-100%)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the generator (same seed, same tasks)."),
    haystack: str = typer.Option("essay", "--haystack", help="essay (offline Markov prose) or noise (RULER's)."),
    mode: str = ModeOption,
    concurrency: int = ConcurrencyOption,
    results: Path | None = ResultsOption,
    url_server: str | None = ServerOption,
) -> None:
    """S-NIAH: find the special magic number in a long haystack; exact match."""

    def body() -> None:
        if haystack not in ("essay", "noise"):
            raise typer.BadParameter("use essay or noise", param_hint="--haystack")
        sizes = sniah_suite.parse_lengths(lengths)
        generated = sniah_suite.generate(lengths=sizes, tasks=tasks, seed=seed, haystack=haystack)  # type: ignore[arg-type]
        label = "_".join(sniah_suite.length_label(s) for s in sizes)
        path = results or Path("bench-results") / f"sniah-{label}-t{tasks}-s{seed}-{haystack}-{mode}.jsonl"
        execute(
            generated,
            lambda task, answer: sniah_suite.score(task.expected, answer),
            results_path=path,
            mode=mode,
            concurrency=concurrency,
            url_server=url_server,
        )

    guarded(body)


@bench_app.command("oolong")
def oolong(
    data: Path | None = typer.Option(None, "--data", help="oolong-synth file you downloaded (JSONL/JSON/Parquet)."),
    split: str = typer.Option("trec_coarse", "--split", help="The `dataset` value to keep."),
    context_len: int = typer.Option(131072, "--context-len", help="The `context_len` value to keep."),
    synthetic: bool = typer.Option(False, "--synthetic", help="Generate counting/classification/extraction tasks."),
    tasks: int | None = typer.Option(None, "--tasks", min=1, help="At most this many tasks (synthetic: default 30)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the synthetic generator."),
    mode: str = ModeOption,
    concurrency: int = ConcurrencyOption,
    results: Path | None = ResultsOption,
    url_server: str | None = ServerOption,
) -> None:
    """OOLONG: aggregation over long contexts; numeric answers score 0.75^|error|, others exact match."""

    def body() -> None:
        if synthetic:
            loaded = oolong_suite.synthetic(tasks=tasks or 30, seed=seed)
            name = f"oolong-synthetic-t{len(loaded)}-s{seed}"
        elif data is not None:
            loaded = oolong_suite.load_tasks(data, split=split, context_len=context_len)[: tasks or None]
            name = f"oolong-{split}-{context_len}-t{len(loaded)}"
        else:
            raise typer.BadParameter("give --data PATH (oolong-synth you downloaded) or --synthetic")
        execute(
            loaded,
            lambda task, answer: oolong_suite.score(task.expected, answer, str(task.meta.get("answer_type", ""))),
            results_path=results or Path("bench-results") / f"{name}-{mode}.jsonl",
            mode=mode,
            concurrency=concurrency,
            url_server=url_server,
        )

    guarded(body)
