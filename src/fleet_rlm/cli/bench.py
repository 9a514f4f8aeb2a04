"""`fleet-rlm bench sniah|oolong`: capability benchmarks where every task is a real turn (persisted, visible in
the UI) run through the API, embedded or --url-server, with the configured models.

Results go to a JSONL file keyed by task id (rerun the same command to resume), a summary JSON beside it, and
a table on stdout with the papers' references alongside.
"""

from __future__ import annotations

from pathlib import Path

import typer

from fleet_rlm.cli.errors import guarded
from fleet_rlm.cli.options import ServerOption

bench_app = typer.Typer(help="Capability benchmarks (S-NIAH, OOLONG) run as real turns.", no_args_is_help=True)

ModeOption = typer.Option("rlm", "--mode", help="Execution mode of each task's turn: rlm, auto, tools or direct.")
ConcurrencyOption = typer.Option(1, "--concurrency", min=1, max=64, help="Tasks run at the same time.")
ResultsOption = typer.Option(None, "--results", help="Results JSONL (default: bench-results/<suite>-<params>.jsonl).")


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
        from fleet_rlm.bench import sniah as sniah_suite
        from fleet_rlm.cli.bench_run import execute

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
        from fleet_rlm.bench import oolong as oolong_suite
        from fleet_rlm.cli.bench_run import execute

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


from fleet_rlm.cli.perf import perf  # noqa: E402 - the performance suite joins the capability benchmarks

bench_app.command("perf")(perf)
