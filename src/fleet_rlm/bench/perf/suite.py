"""Runs the scenarios in order, collects rows, writes the JSON result and returns the report.

A scenario that raises does not stop the suite: its error is recorded and shown as a row, so the table always
says what happened. Full-path scenarios share one fake LM process and one API server (started on first use).
"""

from __future__ import annotations

import importlib
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from fleet_rlm.bench.perf.context import SuiteContext
from fleet_rlm.bench.perf.measure import load_average, machine_info
from fleet_rlm.bench.perf.report import Report, Row

SCENARIOS: dict[str, str] = {
    "sandbox": "fleet_rlm.bench.perf.sandbox_case",
    "context": "fleet_rlm.bench.perf.context_case",
    "turn": "fleet_rlm.bench.perf.turn_case",
    "fanout": "fleet_rlm.bench.perf.fanout_case",
    "concurrency": "fleet_rlm.bench.perf.concurrency_case",
    "api": "fleet_rlm.bench.perf.store_case",
    "cli": "fleet_rlm.bench.perf.cli_case",
}
DEFAULT_RESULTS_DIR = Path("bench/results")


def _scenario(name: str) -> Callable[[SuiteContext], list[Row]]:
    module = importlib.import_module(SCENARIOS[name])
    run: Callable[[SuiteContext], list[Row]] = module.run
    return run


def run_suite(
    *,
    quick: bool = False,
    only: list[str] | None = None,
    results_dir: Path | None = DEFAULT_RESULTS_DIR,
    postgres_url: str | None = None,
    verbose: bool = True,
) -> tuple[Report, Path | None]:
    """Run the selected scenarios (all by default); returns the report and the JSON file written (if any)."""
    names = list(only) if only else list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise ValueError(f"unknown scenario(s) {unknown}; choose from {sorted(SCENARIOS)}")
    report = Report(machine=machine_info(), quick=quick)
    with tempfile.TemporaryDirectory(prefix="fleet-perf-") as work:
        ctx = SuiteContext(quick=quick, work_dir=Path(work), postgres_url=postgres_url, verbose=verbose)
        try:
            for name in names:
                ctx.log(f"{name} ...")
                started = time.perf_counter()
                try:
                    report.rows += _scenario(name)(ctx)
                except Exception as exc:  # recorded as a row: the table says why the figures are missing
                    report.errors[name] = f"{type(exc).__name__}: {str(exc)[:300]}"
                report.durations_s[name] = round(time.perf_counter() - started, 1)
                ctx.log(f"{name} done in {report.durations_s[name]} s")
        finally:
            ctx.close()
    report.machine["load_average_end"] = load_average()
    path = report.write(results_dir) if results_dir is not None else None
    return report, path
