"""Scenario 5, concurrency: N sessions each run a scripted 5-iteration turn at once, 100 ms LM latency.

All N WebSocket clients start together against a `serve-api` process of their own, after warm-up turns (one,
or four per turn process: sessions hash onto the workers, so each has run turns) and once the machine is quiet
(`measure.wait_quiet`: under 15% busy for half a second, at most 30 s). Checked: every turn finishes, and each
client's events are exactly seq 1..last (nothing lost, nothing repeated). Measured: the
delay from an event's `ts` (set when the runtime emits it) to the client's receipt, p50/p99 over all events; the
slowest turn; CPU seconds per turn of the API process alone and of its whole process tree (turn workers and
sandboxes included); the server process's peak RSS. Run twice, each on a server of its own: turns in threads
of the API process (`FLEET_TURN_PROCESSES=0`), then in one worker process per core (the default). The rows
are the default's figures, with the threads' beside them as the baseline.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass

from fleet_rlm.bench.perf.context import SuiteContext
from fleet_rlm.bench.perf.measure import (
    cpu_s,
    peak_rss_mb,
    percentile,
    rss_mb,
    tree_cpu_s,
    tree_rss_mb,
    wait_quiet,
)
from fleet_rlm.bench.perf.report import Row
from fleet_rlm.bench.perf.script import task_for
from fleet_rlm.bench.perf.server import Harness, TurnTrace, harness, new_session, ws_turn

S = "5 concurrency"
THREADS = "turns in API threads (FLEET_TURN_PROCESSES=0)"
LATENCY_S = 0.1
IDEAL_S = 6 * LATENCY_S


async def _all(shared: Harness, sessions: list[str]) -> list[TurnTrace | BaseException]:
    turns = [ws_turn(shared.server, sid, task_for("steps5"), timeout_s=600) for sid in sessions]
    return await asyncio.gather(*turns, return_exceptions=True)


def _problems(traces: list[TurnTrace | BaseException]) -> list[str]:
    problems = []
    for i, trace in enumerate(traces):
        if isinstance(trace, BaseException):
            problems.append(f"session {i}: {type(trace).__name__}: {trace}")
            continue
        seqs = [event["seq"] for event in trace.events]
        if trace.terminal != "turn_finished":
            problems.append(f"session {i}: ended with {trace.terminal}")
        if seqs != list(range(1, len(seqs) + 1)):
            problems.append(f"session {i}: events not exactly 1..{len(seqs)} (lost or duplicated)")
    return problems


async def _warm(shared: Harness, turns: int) -> None:
    """Steady state: every turn process (sessions hash onto them) has paid its lazy imports before the burst."""
    sessions = [new_session(shared.server, f"warm-up {i}") for i in range(turns)]
    for trace in await asyncio.gather(*(ws_turn(shared.server, sid, task_for("steps5")) for sid in sessions)):
        if trace.terminal != "turn_finished":
            raise RuntimeError(f"a warm-up turn ended with {trace.terminal}")


@dataclass
class _Burst:
    """What one burst measured (figures in the rows' units)."""

    problems: list[str]
    summary: str
    p50_ms: float | None
    p99_ms: float | None
    slowest_s: float | None
    api_cpu_ms: float
    all_cpu_ms: float
    peak_rss_mb: float | None
    children_rss_mb: float


def _burst(ctx: SuiteContext, shared: Harness, *, processes: int = 0) -> _Burst:
    count = 3 if ctx.quick else 50
    asyncio.run(_warm(shared, max(1, 4 * processes)))
    sessions = [new_session(shared.server, f"concurrent {i}") for i in range(count)]
    server_pid = shared.server.pid
    shared.lm.set_latency(LATENCY_S)
    quiet = wait_quiet()
    api_cpu, all_cpu = cpu_s(server_pid, reaped=False), tree_cpu_s(server_pid)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    try:
        traces = asyncio.run(_all(shared, sessions))
    finally:
        shared.lm.set_latency(0.0)
    wall = time.perf_counter() - started
    api_cpu, all_cpu = cpu_s(server_pid, reaped=False) - api_cpu, tree_cpu_s(server_pid) - all_cpu
    problems = _problems(traces)
    ok = [t for t in traces if isinstance(t, TurnTrace)]
    delays = [d for t in ok for d in t.delays_ms]
    events = sum(len(t.events) for t in ok)
    summary = (
        f"{len(ok) - len([p for p in problems if 'ended' in p])}/{count} turns finished, {events} events, "
        f"{'no' if not problems else len(problems)} lost/duplicated/failed; all turns done in {wall:.1f} s; "
        f"load {load:.1f} at the start" + (f" (machine {quiet:.0%} busy just before)" if quiet is not None else "")
    )
    return _Burst(
        problems=problems,
        summary=summary + ("; " + "; ".join(problems[:3]) if problems else ""),
        p50_ms=percentile(delays, 50) if delays else None,
        p99_ms=percentile(delays, 99) if delays else None,
        slowest_s=max((t.wall_s for t in ok), default=None),
        api_cpu_ms=api_cpu * 1000.0 / count,
        all_cpu_ms=all_cpu * 1000.0 / count,
        peak_rss_mb=peak_rss_mb(server_pid),
        children_rss_mb=tree_rss_mb(server_pid) - rss_mb(server_pid),
    )


def run(ctx: SuiteContext) -> list[Row]:
    """Each configuration on a server of its own, stopped before the next starts: a finished burst's server
    keeps its 50 sessions' sandboxes (~1.3 GiB) for their idle timeout, and on our VMs the next burst then
    paid 10-50 ms of page faults per turn more (first-touch memory, `perf`: clear_page in the sandboxes).
    For the same reason the suite's shared server (the turn and fan-out scenarios' sandboxes) is stopped
    first: left idle beside the burst it doubled the burst's CPU per turn (115 vs 55 ms) on our VMs.

    Ours is the default (one turn process per core); turns in API threads (`FLEET_TURN_PROCESSES=0`, what the
    server did before turn processes) are measured the same way and shown as the baseline of each row."""
    ctx.release_shared()
    with harness(ctx.work_dir / "server-threads", turn_processes=0) as own:
        threads = _burst(ctx, own)
    processes = os.cpu_count() or 1
    with harness(ctx.work_dir / "server-processes", turn_processes=processes) as own:
        ours = _burst(ctx, own, processes=processes)
    count = 3 if ctx.quick else 50

    def vs(value: float | None) -> dict[str, float | None]:
        return {THREADS: value}

    note = f"FLEET_TURN_PROCESSES={processes} (the default: one per core): {ours.summary}. {THREADS}: {threads.summary}"
    return [
        Row(
            S,
            f"{count} sessions x 5 iterations at once: failed turns + lost/duplicated event streams",
            "",
            float(len(ours.problems)),
            vs(float(len(threads.problems))),
            0.0,
            note=note,
        ),
        Row(S, "event emit -> WebSocket receipt (p50)", "ms", ours.p50_ms, vs(threads.p50_ms)),
        Row(S, "event emit -> WebSocket receipt (p99)", "ms", ours.p99_ms, vs(threads.p99_ms), 100.0),
        Row(
            S,
            "slowest turn, wall",
            "s",
            ours.slowest_s,
            {"ideal (6 LM calls x 100 ms)": IDEAL_S, THREADS: threads.slowest_s},
            3.0,
            target_is_ratio=True,
        ),
        Row(S, "API process CPU per turn", "ms", ours.api_cpu_ms, vs(threads.api_cpu_ms)),
        Row(
            S,
            "server CPU per turn, all processes (turn workers, sandboxes)",
            "ms",
            ours.all_cpu_ms,
            vs(threads.all_cpu_ms),
        ),
        Row(
            S,
            "server process peak RSS",
            "MiB",
            ours.peak_rss_mb,
            vs(threads.peak_rss_mb),
            note=f"its child processes hold {ours.children_rss_mb:.0f} MiB more (RSS after the run); "
            f"{THREADS}: {threads.children_rss_mb:.0f} MiB",
        ),
    ]
