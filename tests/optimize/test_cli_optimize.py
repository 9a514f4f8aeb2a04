"""`fleet-rlm optimize` end to end on the fake LM: list, the MODULE DATASET shorthand with --report and
--promote, then show/compare/rollback through the same embedded server and data dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleet_rlm.cli.main import build_fleet_rlm_app
from fleet_rlm.optimize.datasets import to_jsonl
from fleet_rlm.testing import FakeLMServer
from tests.optimize.fakes import TAUGHT, direct_rows, teaching_lm

pytestmark = pytest.mark.db_independent


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with teaching_lm() as server:
        yield server


@pytest.mark.slow
def test_optimize_shorthand_report_promote_and_rollback(tmp_path: Path, lm: FakeLMServer) -> None:
    env = {
        "FLEET_DATA_DIR": str(tmp_path / "data"),
        "DSPY_LM_MODEL": lm.model,
        "DSPY_LM_API_BASE": lm.base_url,
        "DSPY_LLM_API_KEY": "fake",
        "FLEET_SANDBOX_POOL_SIZE": "0",
        "FLEET_LOCAL_SERVER_IDLE_S": "60",  # the local server the CLI starts does not outlive the run for long
        "COLUMNS": "200",
    }
    app, runner = build_fleet_rlm_app(), CliRunner()
    listed = runner.invoke(app, ["optimize", "list"], env=env)
    assert listed.exit_code == 0 and "extract_from_logs" in listed.output and "router" in listed.output
    data = tmp_path / "squares.jsonl"
    data.write_text(to_jsonl(direct_rows(6)))
    report = tmp_path / "report.md"
    args = ["optimize", "direct", str(data), "--max-metric-calls", "16", "--report", str(report), "--promote"]
    done = runner.invoke(app, args, env=env)
    assert done.exit_code == 0, done.output
    assert "succeeded: baseline 0.0 -> optimized 1.0 (version direct-v1, promoted)" in done.output
    text = report.read_text()
    assert "# Optimization report: direct" in text and f"+{TAUGHT}" in text and "| 0 |" in text
    rolled = runner.invoke(app, ["optimize", "rollback", "direct"], env=env)
    assert rolled.exit_code == 0 and "direct now uses the built-in program" in rolled.output
    bad = runner.invoke(app, ["optimize", "nosuch", str(data)], env=env)
    assert bad.exit_code == 1 and "optimization_module_not_found" in bad.output
