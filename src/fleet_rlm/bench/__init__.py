"""Capability benchmarks for RLM turns: S-NIAH (RULER-style needle in a haystack) and OOLONG (aggregation over
long contexts). Generators and loaders make `BenchTask`s, scorers grade answers, and `run_bench` drives an
injected `run_task(prompt, context) -> TaskOutcome` (the CLI runs each task as a real turn through the API).
`bench/perf/` is reserved for the performance suite.
"""

from fleet_rlm.bench.harness import BenchProgress, run_bench
from fleet_rlm.bench.types import BenchTask, TaskOutcome, TaskResult

__all__ = ["BenchProgress", "BenchTask", "TaskOutcome", "TaskResult", "run_bench"]
