"""Compiled cells (worker_cells): a sandbox runs the host's seed of dspy.RLM's facade instead of compiling it,
ignores a seed of another Python build, and a large cell compiled once runs again under its new cell's name."""

from __future__ import annotations

import marshal
import sys
from pathlib import Path

import pytest
from dspy.primitives.code_interpreter import CodeExecutionError, FinalOutput
from dspy.primitives.facade import SHIM_SETUP

from fleet_rlm.sandbox.worker_cells import SEED_FILE, compile_cell, read_seed
from fleet_rlm.sandbox.worker_code import compiled_worker
from tests.sandbox.conftest import MakeInterpreter

FILLER = "# " + "-" * 78 + "\n"


def _plant_seed(tmp_path: Path, version: str, source: str, compiled_from: str) -> None:
    """Replace the seed of the code directory the test's sandboxes will use (before any of them starts)."""
    seed = compiled_worker(tmp_path / "data") / SEED_FILE
    seed.chmod(0o644)
    with seed.open("wb") as out:
        marshal.dump(version, out)
        marshal.dump([(source, *compile_cell(compiled_from, "<seed>"))], out)


def test_the_code_directory_seeds_the_facade_every_rlm_installs(tmp_path: Path) -> None:
    seed = read_seed(str(compiled_worker(tmp_path)))
    assert list(seed) == [SHIM_SETUP]
    body, last = seed[SHIM_SETUP]
    assert (body, last) == compile_cell(SHIM_SETUP, "<seed>")


def test_a_sandbox_runs_the_seeded_code_for_its_source(make_interpreter: MakeInterpreter, tmp_path: Path) -> None:
    _plant_seed(tmp_path, sys.version, "x = 1", compiled_from="x = 2")
    interp = make_interpreter()
    interp.execute("x = 1")
    assert interp.execute("x") == 2  # the seed ran, not a fresh compile of the source
    interp.execute("x = 1 ")
    assert interp.execute("x") == 1  # any other source compiles as usual


def test_a_seed_of_another_python_build_is_ignored(make_interpreter: MakeInterpreter, tmp_path: Path) -> None:
    _plant_seed(tmp_path, "2.7.18 (another build)", "x = 1", compiled_from="x = 2")
    interp = make_interpreter()
    interp.execute("x = 1")
    assert interp.execute("x") == 1


def test_a_large_cell_run_again_names_the_cell_that_ran(make_interpreter: MakeInterpreter) -> None:
    cell = FILLER * 16 + "def f(n):\n    return 10 // n\n\nf(n)"
    assert len(cell) >= 1024
    interp = make_interpreter()
    assert interp.execute(cell, variables={"n": 5}) == 2
    assert interp.execute(cell, variables={"n": 2}) == 5  # the kept code, with its last expression's value
    with pytest.raises(CodeExecutionError) as info:
        interp.execute(cell, variables={"n": 0})  # cell 3: the traceback points into it, not into cell 1
    error = str(info.value)
    assert "ZeroDivisionError" in error
    assert '"<cell 3>", line 18, in f' in error and "return 10 // n" in error
    assert "<cell 1>" not in error


def test_submit_comes_back_at_every_cell_for_the_same_fields(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(output_fields=[{"name": "answer", "type": "str"}])
    interp.execute("SUBMIT = None")
    result = interp.execute("SUBMIT(answer='back')")  # rebuilt from the cached SUBMIT of these fields
    assert isinstance(result, FinalOutput) and result.output == {"answer": "back"}
    with pytest.raises(CodeExecutionError, match="SUBMIT\\(answer\\)"):
        interp.execute("SUBMIT(wrong=1)")
