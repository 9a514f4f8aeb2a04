"""Scenario 3, turn overhead: a scripted 5-iteration RLM turn, zero-latency fake LM.

Ours goes through the full path (WebSocket message -> API -> runtime -> sandbox -> store -> WebSocket events)
of a real `serve-api` process; the baseline is bare `dspy.RLM` + dspy's LocalInterpreter in this process with
the same script and the same fake LM process. Each figure is the median wall time of several turns; every
fleet-rlm turn runs in a new session (a warm pool lease, as a user's first turn).
"""

from __future__ import annotations

import asyncio
import time

import dspy
from dspy.primitives.local_interpreter import LocalInterpreter

from fleet_rlm.bench.perf.baselines import LOCAL
from fleet_rlm.bench.perf.context import SuiteContext
from fleet_rlm.bench.perf.measure import median, ms
from fleet_rlm.bench.perf.report import Row
from fleet_rlm.bench.perf.script import ANSWER, task_for
from fleet_rlm.bench.perf.server import FAKE_MODEL, Harness, harness, new_session, ws_turn

S = "3 turn overhead"
TASK = task_for("steps5")


def bare_rlm_turns(base_url: str, turns: int) -> list[float]:
    lm = dspy.LM(FAKE_MODEL, api_base=base_url, api_key="fake", cache=False, num_retries=0)
    rlm = dspy.RLM("task -> answer", max_iters=10, interpreter_factory=LocalInterpreter)
    samples = []
    with dspy.context(lm=lm):
        rlm(task=TASK)  # warm-up: imports, adapter caches
        for _ in range(turns):
            started = time.perf_counter()
            prediction = rlm(task=TASK)
            samples.append(time.perf_counter() - started)
            if prediction.answer != ANSWER:
                raise RuntimeError(f"the bare RLM baseline answered {prediction.answer!r}")
    return samples


def run(ctx: SuiteContext) -> list[Row]:
    turns = 2 if ctx.quick else 20  # a median of 20: 10 moved it by +-0.1x from run to run
    shared: Harness = ctx.shared("harness", lambda: harness(ctx.work_dir / "server"))
    shared.lm.set_latency(0.0)
    baseline = bare_rlm_turns(shared.lm.base_url, turns)
    samples, events = [], 0
    for i in range(turns + 1):
        trace = asyncio.run(ws_turn(shared.server, new_session(shared.server, f"turn {i}"), TASK))
        if trace.terminal != "turn_finished":
            raise RuntimeError(f"turn ended with {trace.terminal}: {trace.events[-3:]}")
        if i:  # the first turn warms the server (imports, first lease)
            samples.append(trace.wall_s)
            events = len(trace.events)
    note = f"{events} events per turn persisted and streamed; {turns} turns each"
    return [
        Row(
            S,
            "5-iteration turn, wall (median)",
            "ms",
            ms(median(samples)),
            {LOCAL: ms(median(baseline))},
            1.2,
            True,
            note,
        ),
        Row(S, "overhead per iteration over bare dspy.RLM", "ms", ms((median(samples) - median(baseline)) / 5), {}),
    ]
