"""Quick local-backend measurements (no assertions): `python -m fleet_rlm.sandbox.bench [--reduced]`.

Reports cold start, warm lease, no-op execute median, one host round trip (zero-latency tool), and a 40M-char
context's first load vs a later iteration.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from fleet_rlm.sandbox.interpreter import SandboxInterpreter
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.pool import SandboxPool
from fleet_rlm.sandbox.session import WorkerSession


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def run_benchmark(options: SandboxOptions, *, repeats: int = 200) -> dict[str, Any]:
    results: dict[str, Any] = {}
    cold = []
    for _ in range(5):
        started = time.perf_counter()
        session = WorkerSession(options, "bench")
        session.wait_ready()
        cold.append(time.perf_counter() - started)
        results["isolation"] = session.isolation
        session.close()
    results["cold_start_ms_median"] = _ms(statistics.median(cold))

    pool = SandboxPool(options, size=2)
    pool.prewarm("bench", wait=True)
    started = time.perf_counter()
    leased = pool.lease(None, "bench")
    results["warm_lease_ms"] = _ms(time.perf_counter() - started)
    pool.release(None, leased)
    pool.shutdown()

    interp = SandboxInterpreter({"echo": lambda value: value}, options=options, workspace_id="bench")
    try:
        interp.start()
        noop, call = [], []
        for _ in range(repeats):
            started = time.perf_counter()
            interp.execute("pass")
            noop.append(time.perf_counter() - started)
        for _ in range(repeats):
            started = time.perf_counter()
            interp.execute("echo(1)")
            call.append(time.perf_counter() - started)
        results["noop_execute_ms_median"] = _ms(statistics.median(noop))
        results["tool_round_trip_ms_median"] = _ms(statistics.median(call) - statistics.median(noop))
        context = "lorem ipsum " * (40_000_000 // 12)
        started = time.perf_counter()
        interp.execute("n = len(context)", {"context": context, "query": "q"})
        results["context_40m_first_ms"] = _ms(time.perf_counter() - started)
        later = []
        for _ in range(10):
            started = time.perf_counter()
            interp.execute("n = len(context)", {"context": context, "query": "q"})
            later.append(time.perf_counter() - started)
        results["context_40m_later_ms_median"] = _ms(statistics.median(later))
    finally:
        interp.shutdown()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reduced", action="store_true", help="force reduced isolation (no bubblewrap)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        options = SandboxOptions(data_dir=Path(data_dir), isolation="reduced" if args.reduced else "auto")
        print(json.dumps(run_benchmark(options), indent=2))


if __name__ == "__main__":
    main()
