"""`fleet-rlm optimize` never promotes a version that is not better: `run --promote` says why and leaves the
current version, `optimize promote` shows both scores and refuses without a terminal to ask unless --force, and
the finished run's progress says it finished and after how many metric calls."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleet_rlm.cli.main import build_fleet_rlm_app
from fleet_rlm.optimize.datasets import to_jsonl
from fleet_rlm.testing import FakeLMServer
from tests.optimize.fakes import direct_rows, stubborn_lm

pytestmark = pytest.mark.db_independent


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with stubborn_lm() as server:
        yield server


@pytest.mark.slow
def test_run_promote_and_promote_refuse_a_version_that_is_not_better(tmp_path: Path, lm: FakeLMServer) -> None:
    env = {
        "FLEET_DATA_DIR": str(tmp_path / "data"),
        "DSPY_LM_MODEL": lm.model,
        "DSPY_LM_API_BASE": lm.base_url,
        "DSPY_LLM_API_KEY": "fake",
        "FLEET_SANDBOX_POOL_SIZE": "0",
        "FLEET_LOCAL_SERVER_IDLE_S": "60",
        "COLUMNS": "120",
    }
    app, runner = build_fleet_rlm_app(), CliRunner()
    data = tmp_path / "squares.jsonl"
    data.write_text(to_jsonl(direct_rows(8)))
    done = runner.invoke(app, ["optimize", "direct", str(data), "--max-metric-calls", "20", "--promote"], env=env)
    assert done.exit_code == 0, done.output
    calls = re.search(r"succeeded after (\d+) metric calls of a 20 budget", done.output)
    assert calls is not None, done.output
    assert f"{calls.group(1)}/{calls.group(1)}" in done.output, "a finished run's bar is full"
    assert "not promoted: direct-v1 0.000 vs current builtin-1 0.000 on the same" in done.output
    assert "succeeded: baseline 0.0 -> optimized 0.0 (version direct-v1)" in done.output
    run_id = re.search(r"optimization run (\S+) ", done.output).group(1)  # type: ignore[union-attr]

    refused = runner.invoke(app, ["optimize", "promote", run_id], env=env)
    assert refused.exit_code == 1, refused.output
    assert "direct-v1 0.000 vs current builtin-1 0.000" in refused.output
    assert "error[promotion_not_better]" in refused.output and "--force" in refused.output
    forced = runner.invoke(app, ["optimize", "promote", run_id, "--force"], env=env)
    assert forced.exit_code == 0 and "promoted direct direct-v1" in forced.output, forced.output
