"""`python -m fleet_rlm.bench.perf [--quick] [--only NAME ...]` (the same as `fleet-rlm bench perf`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from fleet_rlm.bench.perf.suite import DEFAULT_RESULTS_DIR, SCENARIOS, run_suite


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fleet_rlm.bench.perf", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, no Deno baseline (CI, < 2 min)")
    parser.add_argument("--only", action="append", choices=sorted(SCENARIOS), help="run only this scenario")
    parser.add_argument("--results-dir", type=Path, default=DEFAULT_RESULTS_DIR)
    parser.add_argument("--postgres-url", default=os.environ.get("FLEET_TEST_POSTGRES_URL"))
    args = parser.parse_args(argv)
    report, path = run_suite(
        quick=args.quick, only=args.only, results_dir=args.results_dir, postgres_url=args.postgres_url
    )
    print(report.markdown())
    if path is not None:
        print(f"\nResults: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
