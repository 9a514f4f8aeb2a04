"""CLI tables fit 80 columns or become a list: `bench sniah`'s results (with the long 'paper' reference) and
`optimize list` never wrap a cell a few characters a line nor split a word, in an 80-column terminal or piped."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from fleet_rlm.bench.summary import REFERENCES
from fleet_rlm.bench.types import TaskOutcome, TaskResult
from fleet_rlm.cli.bench_run import RESULT_COLUMNS, results_rows
from fleet_rlm.cli.main import build_fleet_rlm_app
from fleet_rlm.cli.tables import print_table


def shown(columns: tuple[str, ...], rows: list[list[str]], *, terminal: bool, width: int = 80) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=terminal, color_system=None, highlight=False)
    print_table(columns, rows, title="t", console=console)
    return out.getvalue()


def sniah_rows() -> list[list[str]]:
    outcome = TaskOutcome(answer="x", seconds=1.5, tokens_in=900, tokens_out=40, lm_calls=3, iterations=2)
    results = [TaskResult(f"sniah-{i}", "sniah", 1.0, "x", outcome, meta={"length": 8000}) for i in range(2)]
    return results_rows(results)


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal-80", "piped"])
def test_bench_results_keep_the_paper_reference_whole(terminal: bool) -> None:
    text = shown(RESULT_COLUMNS, sniah_rows(), terminal=terminal)
    assert re.search(r"\n  tasks: +2", text) and re.search(r"\n  score: +1\.000", text), text
    if terminal:  # fits 80 columns, the reference wrapped at word breaks under itself
        assert all(len(line) <= 80 for line in text.splitlines()), text
        words = " ".join(line.strip() for line in text.split("  paper:", 1)[1].splitlines())
        assert REFERENCES["sniah"] in words, text
    else:
        assert f"  paper: {REFERENCES['sniah']}\n" in text, "piped: one line per field, never broken"


def test_a_table_that_fits_stays_a_table_in_a_terminal() -> None:
    text = shown(("id", "status"), [["r1", "succeeded"], ["r2", "failed"]], terminal=True)
    assert "┃ id" in text and "│ r1 │ succeeded │" in text
    assert "status: succeeded" in shown(("id", "status"), [["r1", "succeeded"]], terminal=False), "piped: a list"


def test_optimize_list_at_80_columns_piped_splits_no_word(tmp_path: Path) -> None:
    env = {"FLEET_DATA_DIR": str(tmp_path / "data"), "FLEET_SANDBOX_POOL_SIZE": "0", "COLUMNS": "80"}
    env |= {"FLEET_LOCAL_SERVER_IDLE_S": "5"}
    listed = CliRunner().invoke(build_fleet_rlm_app(), ["optimize", "list"], env=env)
    assert listed.exit_code == 0, listed.output
    assert "\nrouter\n  kind: program\n  required keys: task, mode\n" in listed.output, listed.output
    assert "  metric: cited_answer\n" in listed.output
