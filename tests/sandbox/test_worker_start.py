"""What a sandbox start costs: the worker starts on C modules only, and what it left out still works when a
cell needs it (tracebacks with their source lines, the guest's own imports of those modules)."""

from __future__ import annotations

import pytest
from dspy.primitives.code_interpreter import CodeExecutionError

from tests.sandbox.conftest import MakeInterpreter

HEAVY = ("re", "enum", "json", "threading", "functools", "collections", "linecache", "traceback", "tokenize",
         "ast", "contextlib", "queue", "signal", "importlib.util", "inspect")  # fmt: skip


def test_a_worker_starts_without_the_pure_python_stdlib_it_does_not_need(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    loaded = interp.execute(f"import sys\n[m for m in {HEAVY!r} if m in sys.modules]")
    assert loaded == []


def test_tracebacks_keep_every_cell_source_whoever_loads_linecache(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    assert interp.execute("x = 1") is None
    printed = interp.execute(  # the guest's own traceback, in the cell that first imports traceback
        "import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n    print(traceback.format_exc())"
    )
    assert "<cell 2>" in printed and "    1 / 0" in printed
    assert interp.execute("import linecache\nlinecache.getline('<cell 1>', 1) == 'x = 1'") is True
    with pytest.raises(CodeExecutionError) as info:  # later cells go straight into linecache
        interp.execute("def g():\n    raise ValueError('boom')\ng()")
    assert "raise ValueError('boom')" in str(info.value) and "line 3, in <module>" in str(info.value)


def test_the_first_error_of_a_sandbox_shows_its_source(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    with pytest.raises(CodeExecutionError) as info:
        interp.execute("y = [1]\ny[5]")
    assert "y[5]" in str(info.value) and "IndexError" in str(info.value)
    assert interp.execute("import threading, signal, json\nthreading.current_thread() is threading.main_thread()")


def test_guest_code_runs_with_the_cyclic_collector_on(make_interpreter: MakeInterpreter) -> None:
    """The worker starts with the collector off (worker_code._BOOT) and turns it on before any cell."""
    interp = make_interpreter()
    assert interp.execute("import gc\ngc.isenabled()") is True
