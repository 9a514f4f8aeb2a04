"""Scenario 4, fan-out: llm_query_batched of 64 prompts at 200 ms fake latency, and 8 parallel rlm_query children.

Ours runs through the full path with the server's `batch_concurrency=16` (the runtime's own llm_query_batched
honours it, replacing the 8-thread one dspy.RLM registers); the batch is timed from its first `sub_lm_start` to
its last `sub_lm_end` event (server clock). Ideal: ceil(64/16) x 200 ms = 0.8 s. The baseline is bare dspy.RLM +
LocalInterpreter with dspy's own llm_query_batched, timed as the cell that runs it. Children: the span from the
first `child_start` to the last `child_end`; each child makes one 200 ms LM call, so the ideal is 0.2 s.
"""

from __future__ import annotations

import asyncio
import math
import time
from datetime import datetime
from typing import Any

import dspy
from dspy.primitives.local_interpreter import LocalInterpreter

from fleet_rlm.bench.perf.baselines import LOCAL
from fleet_rlm.bench.perf.context import SuiteContext
from fleet_rlm.bench.perf.report import Row
from fleet_rlm.bench.perf.script import task_for
from fleet_rlm.bench.perf.server import FAKE_MODEL, SERVER_SETTINGS, Harness, harness, new_session, ws_turn

S = "4 fan-out"
PROMPTS = 64
CHILDREN = 8
LATENCY_S = 0.2


class _TimedLocal(LocalInterpreter):
    """LocalInterpreter recording how long each cell took."""

    cells: list[float] = []

    def execute(self, code: str, variables: dict[str, Any] | None = None) -> Any:
        started = time.perf_counter()
        try:
            return super().execute(code, variables)
        finally:
            if "llm_query_batched" in code:
                _TimedLocal.cells.append(time.perf_counter() - started)


def _span(events: list[dict[str, Any]], start: str, end: str) -> float:
    def when(kind: str) -> list[float]:
        return [datetime.fromisoformat(e["ts"].replace("Z", "+00:00")).timestamp() for e in events if e["type"] == kind]

    starts, ends = when(start), when(end)
    if not starts or not ends:
        raise RuntimeError(f"no {start}/{end} events in the turn")
    return max(ends) - min(starts)


def _bare_batch(base_url: str) -> float:
    lm = dspy.LM(FAKE_MODEL, api_base=base_url, api_key="fake", cache=False, num_retries=0)
    rlm = dspy.RLM("task -> answer", max_iters=5, max_llm_calls=200, interpreter_factory=_TimedLocal)
    _TimedLocal.cells = []
    with dspy.context(lm=lm):
        rlm(task=task_for(f"batch{PROMPTS}"))
    if not _TimedLocal.cells:
        raise RuntimeError("the bare RLM baseline never ran the batch")
    return _TimedLocal.cells[0]


def _turn(shared: Harness, plan: str) -> list[dict[str, Any]]:
    trace = asyncio.run(ws_turn(shared.server, new_session(shared.server, plan), task_for(plan)))
    if trace.terminal != "turn_finished":
        raise RuntimeError(f"{plan} turn ended with {trace.terminal}")
    return trace.events


def run(ctx: SuiteContext) -> list[Row]:
    shared: Harness = ctx.shared("harness", lambda: harness(ctx.work_dir / "server"))
    shared.lm.set_latency(LATENCY_S)
    try:
        baseline = _bare_batch(shared.lm.base_url)
        batch = _span(_turn(shared, f"batch{PROMPTS}"), "sub_lm_start", "sub_lm_end")
        children = _span(_turn(shared, f"children{CHILDREN}"), "child_start", "child_end")
    finally:
        shared.lm.set_latency(0.0)
    concurrency = int(SERVER_SETTINGS["batch_concurrency"])
    ideal = math.ceil(PROMPTS / concurrency) * LATENCY_S
    return [
        Row(
            S,
            f"llm_query_batched x{PROMPTS}, {LATENCY_S * 1000:g} ms latency, batch_concurrency {concurrency}",
            "s",
            batch,
            {"ideal": ideal, f"bare dspy.RLM + {LOCAL} (8 threads)": baseline},
            1.2,
            True,
            note="ratio is to the ideal",
        ),
        Row(
            S,
            f"{CHILDREN} parallel rlm_query children (first start to last end)",
            "s",
            children,
            {"ideal (one LM call each)": LATENCY_S},
            note="each child starts its own sandbox (cold start included); bare dspy.RLM has no rlm_query",
        ),
    ]
