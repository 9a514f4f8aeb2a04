"""Scenario 1, the sandbox: cold start, warm lease, no-op execute, host round trips, 50 guest-thread llm_queries.

Ours is `SandboxInterpreter` (bubblewrap when available) with a `SandboxPool` for leases; the baselines are
dspy's LocalInterpreter and Deno/Pyodide PythonInterpreter, driven through the same `CodeInterpreter` calls.
llm_query is the same host function for everyone: one Chat Completions POST over a keep-alive HTTP client to a
zero-latency fake LM in its own process (not `dspy.LM`, whose ~10 ms of LiteLLM overhead would hide the sandbox's
cost; not in this process, where its event loop would compete for the GIL with the calls being measured).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from fleet_rlm.bench.perf.baselines import DENO, LOCAL, deno_interpreter, deno_unavailable, local_interpreter
from fleet_rlm.bench.perf.context import SuiteContext
from fleet_rlm.bench.perf.measure import median, ms, paired_delta, percentile, timed
from fleet_rlm.bench.perf.report import Row
from fleet_rlm.bench.perf.server import fake_lm_process
from fleet_rlm.sandbox import SandboxOptions, SandboxPool
from fleet_rlm.sandbox.interpreter import SandboxInterpreter

S = "1 sandbox"
FAN_OUT = (
    "from concurrent.futures import ThreadPoolExecutor\n"
    "with ThreadPoolExecutor(50) as pool:\n"
    "    replies = list(pool.map(llm_query, ['prompt %d' % i for i in range(50)]))\n"
    "assert len(replies) == 50"
)


def _figures(make: Callable[[dict[str, Any]], Any], tools: dict[str, Any], repeats: int) -> dict[str, float]:
    """Every per-interpreter figure, in ms, for one implementation."""
    out: dict[str, float] = {}
    colds = []
    for _ in range(3):
        started = time.perf_counter()
        interp = make(tools)
        interp.execute("1")
        colds.append(time.perf_counter() - started)
        interp.shutdown()
    out["cold"] = ms(median(colds))
    interp = make(tools)
    try:
        interp.execute("1")
        noop = timed(lambda: interp.execute("pass"), repeats)
        echo = paired_delta(lambda: interp.execute("echo(1)"), lambda: interp.execute("pass"), repeats)
        llm = paired_delta(lambda: interp.execute("llm_query('hello')"), lambda: interp.execute("pass"), repeats // 2)
        over = paired_delta(
            lambda: interp.execute("llm_query('hello')"),
            lambda: (interp.execute("pass"), tools["llm_query"]("hello")),
            repeats // 2,
        )
        fan = timed(lambda: interp.execute(FAN_OUT), 3 if repeats >= 100 else 1, warmup=1)
    finally:
        interp.shutdown()
    out["noop_p50"], out["noop_p90"] = ms(median(noop)), ms(percentile(noop, 90))
    out["tool_rt"], out["llm_rt"], out["llm_over"] = ms(median(echo)), ms(median(llm)), ms(median(over))
    out["fan50"] = ms(median(fan))
    return out


def _lease_ms(options: SandboxOptions, repeats: int) -> float:
    pool = SandboxPool(options, size=1)
    samples = []
    try:
        for i in range(repeats):
            pool.prewarm("bench", wait=True)
            deadline = time.monotonic() + 30
            while pool.stats()["spares"] < 1 and time.monotonic() < deadline:  # the lease's own refill
                time.sleep(0.01)
            started = time.perf_counter()
            session = pool.lease(f"s{i}", "bench")
            samples.append(time.perf_counter() - started)
            pool.end_session(f"s{i}")
            del session
    finally:
        pool.shutdown()
    return ms(median(samples))


def run(ctx: SuiteContext) -> list[Row]:
    repeats = 20 if ctx.quick else 300
    options = SandboxOptions(data_dir=ctx.work_dir / "sandbox", cell_timeout_s=60.0)
    with fake_lm_process(0.0) as lm, httpx.Client(base_url=lm.base_url, timeout=30) as http:

        def llm_query(prompt: str) -> str:
            body = {"model": "fake", "messages": [{"role": "user", "content": prompt}]}
            reply = http.post("/chat/completions", json=body).json()
            return str(reply["choices"][0]["message"]["content"])

        direct = ms(median(timed(lambda: llm_query("hello"), repeats // 2)))

        tools = {"echo": lambda value: value, "llm_query": llm_query}

        def ours_factory(t: dict[str, Any]) -> SandboxInterpreter:
            return SandboxInterpreter(dict(t), options=options, workspace_id="bench")

        figures = {"ours": _figures(ours_factory, tools, repeats), LOCAL: _figures(local_interpreter, tools, repeats)}
        deno_reason = None if ctx.quick else deno_unavailable()
        if not ctx.quick and deno_reason is None:
            figures[DENO] = _figures(deno_interpreter, tools, max(repeats // 5, 20))
    lease = _lease_ms(options, 3 if ctx.quick else 20)
    missing = "Deno baseline skipped in --quick" if ctx.quick else (f"Deno: {deno_reason}" if deno_reason else "")

    def row(metric: str, key: str, target: float | None = None, note: str = "") -> Row:
        baselines: dict[str, float | None] = {LOCAL: figures[LOCAL][key], DENO: figures.get(DENO, {}).get(key)}
        return Row(
            S, metric, "ms", figures["ours"][key], baselines, target, note=" ".join(filter(None, [note, missing]))
        )

    return [
        row("cold start to first result (median of 3)", "cold"),
        Row(S, "warm lease from the pool (median)", "ms", lease, {}, 5.0, note="dspy interpreters have no pool"),
        row("no-op execute (median)", "noop_p50", 1.0),
        row("no-op execute (p90)", "noop_p90"),
        row("host tool round trip (zero-work tool, over no-op)", "tool_rt", 2.0),
        row("llm_query round trip, zero-latency fake LM (over no-op)", "llm_rt"),
        row("llm_query round trip minus the same call made on the host", "llm_over", 2.0),
        Row(S, "the same llm_query called directly on the host (reference)", "ms", direct, {}),
        row("50 concurrent llm_query from guest threads (wall)", "fan50"),
    ]
