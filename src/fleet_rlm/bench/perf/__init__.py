"""The performance suite: fleet-rlm's speed side by side with dspy's own interpreters and bare dspy.RLM.

    fleet-rlm bench perf [--quick] [--only NAME]        # or: python -m fleet_rlm.bench.perf

Scenarios (each a module `<name>_case.py` with `run(ctx) -> list[Row]`): sandbox, context, turn, fanout,
concurrency, api, cli. Results: one Markdown table (our figure, each baseline measured in the same run, the ratio and
the target) and a JSON file under bench/results/ with the machine's facts. Timings are never asserted by tests.
"""

import os

# As fleet_rlm.llm does on import (without importing dspy here: the fake LM process imports this package): no
# baseline, bare dspy included, fetches the model price table over the network in the middle of a measurement.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fleet_rlm.bench.perf.report import Report, Row, markdown_table
from fleet_rlm.bench.perf.suite import SCENARIOS, run_suite

__all__ = ["SCENARIOS", "Report", "Row", "markdown_table", "run_suite"]
