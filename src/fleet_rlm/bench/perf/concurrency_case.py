"""Scenario 5, concurrency: N sessions each run a scripted 5-iteration turn at once, 100 ms LM latency.

All N WebSocket clients start together against a `serve-api` process of their own, after warm-up turns (one,
or four per turn process: sessions hash onto the workers, so each has run turns) and once the machine is quiet
(`measure.wait_quiet`: under 15% busy for half a second, at most 30 s). Checked: every turn finishes, and each
client's events are exactly seq 1..last (nothing lost, nothing repeated). Measured: the
delay from an event's `ts` (set when the runtime emits it) to the client's receipt, p50/p99 over all events; the
slowest turn; CPU seconds per turn of the API process alone and of its whole process tree (turn workers and
sandboxes included); the server process's peak RSS. Run twice: turns in threads of the API process
(`FLEET_TURN_PROCESSES=0`), then in one worker process per core (the default).
"""

from __future__ import annotations

import asyncio
import os
import time

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


def _burst(ctx: SuiteContext, shared: Harness, label: str, *, processes: int = 0) -> list[Row]:
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
    sandboxes = tree_rss_mb(server_pid) - rss_mb(server_pid)
    summary = (
        f"{len(ok) - len([p for p in problems if 'ended' in p])}/{count} turns finished, {events} events, "
        f"{'no' if not problems else len(problems)} lost/duplicated/failed; all turns done in {wall:.1f} s; "
        f"load {load:.1f} at the start" + (f" (machine {quiet:.0%} busy just before)" if quiet is not None else "")
    )
    note = summary + ("; " + "; ".join(problems[:3]) if problems else "")
    p50 = percentile(delays, 50) if delays else None
    p99 = percentile(delays, 99) if delays else None
    slowest = max((t.wall_s for t in ok), default=None)
    s = f"{S} ({label})"
    return [
        Row(
            s,
            f"{count} sessions x 5 iterations at once: failed turns + lost/duplicated event streams",
            "",
            float(len(problems)),
            {},
            0.0,
            note=note,
        ),
        Row(s, "event emit -> WebSocket receipt (p50)", "ms", p50, {}),
        Row(s, "event emit -> WebSocket receipt (p99)", "ms", p99, {}, 100.0),
        Row(s, "slowest turn, wall", "s", slowest, {"ideal (6 LM calls x 100 ms)": IDEAL_S}, 3.0, target_is_ratio=True),
        Row(s, "API process CPU per turn", "ms", api_cpu * 1000.0 / count, {}),
        Row(s, "server CPU per turn, all processes (turn workers, sandboxes)", "ms", all_cpu * 1000.0 / count, {}),
        Row(
            s,
            "server process peak RSS",
            "MiB",
            peak_rss_mb(server_pid),
            {},
            note=f"its child processes hold {sandboxes:.0f} MiB more (RSS after the run)",
        ),
    ]


def run(ctx: SuiteContext) -> list[Row]:
    """Each configuration on a server of its own, stopped before the next starts: a finished burst's server
    keeps its 50 sessions' sandboxes (~1.3 GiB) for their idle timeout, and on our VMs the next burst then
    paid 10-50 ms of page faults per turn more (first-touch memory, `perf`: clear_page in the sandboxes).
    For the same reason the suite's shared server (the turn and fan-out scenarios' sandboxes) is stopped
    first: left idle beside the burst it doubled the burst's CPU per turn (115 vs 55 ms) on our VMs."""
    ctx.release_shared()
    with harness(ctx.work_dir / "server-threads", turn_processes=0) as own:
        rows = _burst(ctx, own, "FLEET_TURN_PROCESSES=0: turns in API threads")
    processes = os.cpu_count() or 1
    with harness(ctx.work_dir / "server-processes", turn_processes=processes) as own:
        rows += _burst(ctx, own, f"FLEET_TURN_PROCESSES={processes}: the default here", processes=processes)
    return rows
