"""`fleet-rlm bench perf [--quick] [--only NAME]`: the performance suite (fleet_rlm.bench.perf) from the CLI.

Prints the Markdown table (ours, each baseline measured in the same run, ratio, target) and writes the JSON
result under bench/results/.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from fleet_rlm.bench.perf import SCENARIOS, run_suite
from fleet_rlm.cli.errors import guarded


def perf(
    quick: bool = typer.Option(False, "--quick", help="Small sizes and no Deno baseline (what CI runs, < 2 min)."),
    only: list[str] = typer.Option([], "--only", help=f"Run only this scenario (repeatable): {', '.join(SCENARIOS)}."),
    results_dir: Path = typer.Option(Path("bench/results"), "--results-dir", help="Where the JSON result goes."),
    postgres_url: str | None = typer.Option(
        None, "--postgres-url", help="Also run the API scenario on this Postgres (or FLEET_TEST_POSTGRES_URL)."
    ),
) -> None:
    """Performance suite: sandbox, large context, turn overhead, fan-out, concurrency and API timings."""

    def body() -> None:
        unknown = [name for name in only if name not in SCENARIOS]
        if unknown:
            raise typer.BadParameter(f"unknown scenario {unknown[0]!r}; choose from {', '.join(SCENARIOS)}")
        report, path = run_suite(
            quick=quick,
            only=only or None,
            results_dir=results_dir,
            postgres_url=postgres_url or os.environ.get("FLEET_TEST_POSTGRES_URL"),
        )
        typer.echo(report.markdown())
        if path is not None:
            typer.echo(f"\nResults: {path}", err=True)

    guarded(body)
