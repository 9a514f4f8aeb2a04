"""`fleet-rlm bench sniah` end to end on the fake LM: every task is a real rlm turn (sandbox included) whose
scripted code searches `context` for the needle with a regex and SUBMITs it; the rerun resumes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fleet_rlm.cli.main import build_fleet_rlm_app
from fleet_rlm.testing import FakeLMServer, RecordedRequest, adapter_fields_rule, python_block

_KEY = re.compile(r"special magic number for (\S+) mentioned")


def needle_code(field: str, request: RecordedRequest) -> Any:
    """The RLM action step: regex over the REPL's `context`, then SUBMIT (runs in the real sandbox)."""
    key = _KEY.search(request.text)
    if field != "code" or key is None:
        return None
    pattern = r"special magic numbers for " + re.escape(key.group(1)) + r" is: (\d{7})"
    return python_block(f"import re\nm = re.search({pattern!r}, context)\nSUBMIT(answer=m.group(1))")


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(rules=[adapter_fields_rule(answer="no idea", choose=needle_code)]) as server:
        yield server


def cli_env(data_dir: Path, lm: FakeLMServer) -> dict[str, str]:
    return {
        "FLEET_DATA_DIR": str(data_dir),
        "DSPY_LM_MODEL": lm.model,
        "DSPY_LM_API_BASE": lm.base_url,
        "DSPY_LLM_API_KEY": "fake",
        "FLEET_SANDBOX_POOL_SIZE": "0",
        "FLEET_LOCAL_SERVER_IDLE_S": "60",  # the local server the CLI starts does not outlive the run for long
        "COLUMNS": "200",
    }


@pytest.mark.slow
def test_bench_sniah_end_to_end_and_resume(tmp_path: Path, lm: FakeLMServer) -> None:
    results = tmp_path / "sniah.jsonl"
    args = ["bench", "sniah", "--tasks", "5", "--lengths", "8k,1m", "--results", str(results), "--concurrency", "2"]
    runner = CliRunner()
    first = runner.invoke(build_fleet_rlm_app(), args, env=cli_env(tmp_path / "data", lm))
    assert first.exit_code == 0, first.output
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(rows) == 10 and all(r["score"] == 1.0 for r in rows), [r["outcome"] for r in rows if r["score"] < 1]
    assert all(r["outcome"]["run_id"] and r["outcome"]["iterations"] >= 1 for r in rows)
    assert "sniah 8k" in first.output and "sniah 1m" in first.output and "reference, see paper" in first.output
    summary = json.loads(results.with_suffix(".summary.json").read_text())
    assert {g["group"]: g["score"] for g in summary["groups"]} == {"sniah 8k": 1.0, "sniah 1m": 1.0, "all": 1.0}
    requests = len(lm.requests)
    again = runner.invoke(build_fleet_rlm_app(), args, env=cli_env(tmp_path / "data", lm))
    assert again.exit_code == 0, again.output
    assert len(lm.requests) == requests  # every task id was already recorded: nothing ran again
