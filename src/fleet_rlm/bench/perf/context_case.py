"""Scenario 2, large context: first load, each later iteration, and peak RSS, at 1M/10M/40M characters.

`dspy.RLM` hands every input to `execute(code, variables)` on every iteration; this replays exactly those calls
(one `len(context)` cell per iteration) against each interpreter. Each (interpreter, size) runs in a fresh
process (`python -m fleet_rlm.bench.perf.context_case IMPL CHARS`) so peak RSS (VmHWM of that process and its
sandbox processes) belongs to that measurement alone. "Extra" is a later iteration's cost minus the same cell
with a tiny context. RSS is reported as growth over the process tree's resident size before the context existed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fleet_rlm.bench.perf.baselines import DENO, LOCAL, deno_interpreter, deno_unavailable, local_interpreter
from fleet_rlm.bench.perf.context import SuiteContext
from fleet_rlm.bench.perf.measure import descendants, median, ms, peak_rss_mb, tree_rss_mb
from fleet_rlm.bench.perf.report import Row

S = "2 large context"
CODE = "n = len(context)"
LATER = 5
PROBE_TIMEOUT_S = 900


PATTERN = "Lorem ipsum dolor sit amet, consectetur "  # 40 characters: divides every size the suite uses


def make_context(chars: int) -> str:
    """`chars` characters built in one allocation: a concatenation would add a second copy to the caller's peak."""
    whole, rest = divmod(chars, len(PATTERN))
    return PATTERN * whole if not rest else PATTERN * whole + PATTERN[:rest]


def _make(impl: str, data_dir: Path) -> Any:
    if impl == "ours":
        from fleet_rlm.sandbox import SandboxOptions
        from fleet_rlm.sandbox.interpreter import SandboxInterpreter

        return SandboxInterpreter(options=SandboxOptions(data_dir=data_dir), workspace_id="ctx")
    return local_interpreter() if impl == "local" else deno_interpreter()


def _tree_peak(pid: int) -> float:
    return sum(peak_rss_mb(p) for p in [pid, *descendants(pid)])


def probe(impl: str, chars: int) -> dict[str, float]:
    """One measurement in this process; returns ms and MiB figures."""
    with tempfile.TemporaryDirectory() as data_dir:
        interp = _make(impl, Path(data_dir))
        try:
            interp.execute("1")
            small = []
            for _ in range(LATER):
                started = time.perf_counter()
                interp.execute(CODE, {"context": "tiny", "query": "q"})
                small.append(time.perf_counter() - started)
            rss_before = tree_rss_mb(os.getpid())
            context = make_context(chars)
            started = time.perf_counter()
            interp.execute(CODE, {"context": context, "query": "q"})
            first = time.perf_counter() - started
            later = []
            for _ in range(LATER):
                started = time.perf_counter()
                interp.execute(CODE, {"context": context, "query": "q"})
                later.append(time.perf_counter() - started)
            peak = _tree_peak(os.getpid())
        finally:
            interp.shutdown()
    return {
        "first_ms": ms(first),
        "later_ms": ms(median(later)),
        "extra_ms": ms(median(later) - median(small)),
        "rss_added_mb": max(peak - rss_before, 0.0),
    }


def _run_probe(impl: str, chars: int) -> dict[str, float] | str:
    command = [sys.executable, "-m", "fleet_rlm.bench.perf.context_case", impl, str(chars)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return f"did not finish within {PROBE_TIMEOUT_S} s"
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"probe failed: {tail[:200]}"
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _rows(chars: int, results: dict[str, dict[str, float] | str]) -> list[Row]:
    label = f"{chars // 1_000_000}M chars"
    note = "; ".join(f"{name}: {value}" for name, value in results.items() if isinstance(value, str))

    def figure(name: str, key: str) -> float | None:
        value = results[name]
        return None if isinstance(value, str) else value[key]

    def row(metric: str, key: str, unit: str, target: float | None = None) -> Row:
        baselines = {LOCAL: figure(LOCAL, key), DENO: figure(DENO, key)}
        return Row(S, f"{label}: {metric}", unit, figure("ours", key), baselines, target, note=note)

    return [
        row("first load", "first_ms", "ms"),
        row("later iteration (median)", "later_ms", "ms"),
        row("later iteration, extra over a tiny context", "extra_ms", "ms", 10.0 if chars >= 40_000_000 else None),
        row("peak RSS added (host + sandbox)", "rss_added_mb", "MiB", 3 * chars / 2**20),
    ]


def run(ctx: SuiteContext) -> list[Row]:
    sizes = [1_000_000] if ctx.quick else [1_000_000, 10_000_000, 40_000_000]
    deno_reason = "skipped in --quick" if ctx.quick else deno_unavailable()
    rows: list[Row] = []
    for chars in sizes:
        ctx.log(f"context {chars:,} chars")
        results: dict[str, dict[str, float] | str] = {
            "ours": _run_probe("ours", chars),
            LOCAL: _run_probe("local", chars),
        }
        results[DENO] = f"{deno_reason}" if deno_reason else _run_probe("deno", chars)
        rows += _rows(chars, results)
    return rows


if __name__ == "__main__":
    print(json.dumps(probe(sys.argv[1], int(sys.argv[2]))))
