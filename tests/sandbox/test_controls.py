"""Public controls of a sandbox: interrupt()/kill() from another thread, positional guest arguments for
keyword-only tools (as dspy.RLM wraps them), workspace roots prepared by the sandbox, and output capture that
survives cells closing or replacing their stdout."""

from __future__ import annotations

import inspect
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from dspy.primitives.code_interpreter import CodeExecutionError

from fleet_rlm.sandbox import prepare_roots
from fleet_rlm.sandbox.bridge import bind_positional
from tests.sandbox.conftest import MakeInterpreter


def _rlm_style(fn: Any) -> Any:
    """What dspy.RLM hands the interpreter: `invoke(**kwargs)` advertising the tool's own signature."""

    def invoke(**kwargs: Any) -> Any:
        return fn(**kwargs)

    invoke.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return invoke


def _after(delay_s: float, action: Any) -> threading.Thread:
    thread = threading.Thread(target=lambda: (time.sleep(delay_s), action()))
    thread.start()
    return thread


def test_interrupt_stops_the_cell_and_keeps_state(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    interp.execute("kept = 41")
    thread = _after(0.5, interp.interrupt)
    with pytest.raises(CodeExecutionError, match="KeyboardInterrupt"):
        interp.execute("import time\nwhile True: time.sleep(0.01)")
    thread.join()
    assert interp.execute("kept + 1") == 42
    interp.interrupt()  # between cells: nothing to interrupt, nothing breaks
    assert interp.execute("kept") == 41


def test_kill_resets_the_sandbox(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    interp.execute("lost = 1")
    thread = _after(0.5, interp.kill)
    with pytest.raises(CodeExecutionError, match=r"\[sandbox reset\]"):
        interp.execute("import time\ntime.sleep(30)")
    thread.join()
    with pytest.raises(CodeExecutionError, match="NameError"):
        interp.execute("lost")


def test_positional_guest_arguments_reach_keyword_only_tools(make_interpreter: MakeInterpreter) -> None:
    def search(query: str, limit: int = 2) -> list[str]:
        return [f"{query}-{i}" for i in range(limit)]

    interp = make_interpreter(tools={"search": _rlm_style(search)})
    assert interp.execute("search('x', 3)") == ["x-0", "x-1", "x-2"]
    assert interp.execute("search('y', limit=1)") == ["y-0"]
    with pytest.raises(CodeExecutionError, match="ToolError"):
        interp.execute("search('a', 1, 2)")


def test_bind_positional_leaves_positional_signatures_alone() -> None:
    def spread(*items: Any) -> int:
        return len(items)

    def mixed(a: int, /, b: int, **extra: Any) -> None: ...

    def named(a: int, b: int = 0, **extra: Any) -> None: ...

    assert bind_positional(spread, [1, 2], {}) == ([1, 2], {})
    assert bind_positional(mixed, [1, 2], {}) == ([1, 2], {})
    assert bind_positional(named, [1], {"b": 2, "c": 3}) == ([], {"a": 1, "b": 2, "c": 3})
    assert bind_positional(named, [], {"a": 1}) == ([], {"a": 1})


def test_prepare_roots_creates_the_workspace_layout(tmp_path: Path) -> None:
    roots = prepare_roots(tmp_path / "workspaces", "w1", isolation="reduced")
    assert sorted(p.name for p in roots.host_root.iterdir()) == ["artifacts", "buffers", "memory", "meta"]
    assert roots.memories_file.read_text(encoding="utf-8").startswith("# Memories")
    again = prepare_roots(tmp_path / "workspaces", "w1")
    assert again.host_root == roots.host_root


def test_capture_survives_cells_that_close_or_replace_stdout(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    assert interp.execute("import os\nos.close(1)\nos.close(2)") is None
    assert interp.execute("print('after close')") == "after close"
    assert interp.execute("import sys\nsys.stdout.close()") is None
    assert interp.execute("print('after stream close')") == "after stream close"
    assert interp.execute("import sys, io\nsys.stdout = io.StringIO()") is None
    assert interp.execute("print('after replace')") == "after replace"
    many = interp.execute("for i in range(3000): print(i)")
    assert many is not None and many.startswith("0\n1\n") and many.endswith("2999")
