"""The performance suite's shape, never its timings: `fleet-rlm bench perf --quick` prints a complete table and
writes a JSON result with the machine's facts; the report and the scripted model behave as documented."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fleet_rlm.bench.perf import SCENARIOS, Report, Row, markdown_table
from fleet_rlm.bench.perf.context import SuiteContext
from fleet_rlm.bench.perf.script import ANSWER, MARK, perf_rule, task_for
from fleet_rlm.testing import FakeLMServer

MACHINE_KEYS = {"cpu_count", "cpu_model", "python", "dspy", "platform", "isolation", "load_average_start"}


def test_rows_compute_ratio_and_target() -> None:
    faster = Row("s", "m", "ms", 2.0, {"base": 4.0}, 1.3, True)
    assert faster.ratio == 0.5 and faster.met is True
    absolute = Row("s", "m", "ms", 6.0, {}, 5.0)
    assert absolute.ratio is None and absolute.met is False
    missing = Row("s", "m", "ms", None, {"base": None}, 5.0, note="why")
    assert missing.met is None
    table = markdown_table([faster, absolute, missing])
    assert table.splitlines()[0].startswith("| Scenario | Metric | fleet-rlm |")
    assert "0.50x" in table and "**no**" in table and "n/a" in table and "why" in table


def test_failed_scenarios_appear_in_the_table(tmp_path: Path) -> None:
    report = Report(machine={"started_at": "2026-01-01T00:00:00Z"}, quick=True, errors={"api": "boom"})
    assert "(scenario failed)" in report.markdown() and "boom" in report.markdown()
    path = report.write(tmp_path)
    assert json.loads(path.read_text())["errors"] == {"api": "boom"}
    assert (tmp_path / "perf-quick-latest.json").exists()


def test_shared_processes_are_released_and_started_again_on_demand(tmp_path: Path) -> None:
    """A scenario that needs the machine to itself stops the shared processes; the next user gets a fresh one."""
    log: list[str] = []

    @contextmanager
    def process(name: str) -> Iterator[str]:
        log.append(f"start {name}")
        try:
            yield name
        finally:
            log.append(f"stop {name}")

    ctx = SuiteContext(quick=True, work_dir=tmp_path, verbose=False)
    assert ctx.shared("lm", lambda: process("lm 1")) == "lm 1"
    assert ctx.shared("lm", lambda: process("never")) == "lm 1"
    ctx.release_shared()
    assert log == ["start lm 1", "stop lm 1"]
    assert ctx.shared("lm", lambda: process("lm 2")) == "lm 2"
    ctx.close()
    assert log == ["start lm 1", "stop lm 1", "start lm 2", "stop lm 2"]


def test_script_counts_steps_without_state() -> None:
    import dspy
    from dspy.primitives.local_interpreter import LocalInterpreter

    with FakeLMServer(rule=perf_rule()) as lm, dspy.context(lm=lm.dspy_lm()):
        rlm = dspy.RLM("task -> answer", max_iters=10, interpreter_factory=LocalInterpreter)
        prediction = rlm(task=task_for("steps3"))
        assert prediction.answer == ANSWER
        assert len(prediction.trajectory) == 3
        assert all(MARK in step["code"] for step in prediction.trajectory)


@pytest.mark.slow
def test_quick_run_prints_a_complete_table_and_json(tmp_path: Path) -> None:
    command = [
        str(Path(sys.executable).with_name("fleet-rlm")),
        "bench",
        "perf",
        "--quick",
        "--results-dir",
        str(tmp_path),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    table = [line for line in done.stdout.splitlines() if line.startswith("|")]
    assert table[0].startswith("| Scenario | Metric | fleet-rlm | Baselines (same run) | Ratio | Target | Met |")
    result = json.loads((tmp_path / "perf-quick-latest.json").read_text())
    assert result["quick"] is True
    assert set(result["machine"]) >= MACHINE_KEYS
    assert result["errors"] == {}, result["errors"]
    scenarios = {row["scenario"].split(" ", 1)[0] for row in result["rows"]}
    assert scenarios == {str(i) for i in range(1, len(SCENARIOS) + 1)}
    for row in result["rows"]:
        assert row["ours"] is not None or row["note"], row  # a figure, or the reason there is none
        assert set(row) >= {"metric", "unit", "baselines", "ratio", "target", "met"}
    assert len(table) == len(result["rows"]) + 2
