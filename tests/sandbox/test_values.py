"""`execute()` returns values as dspy's `CodeInterpreter` contract says, on every backend: the JSON value of the
last expression as that value (same as `dspy.LocalInterpreter`), anything else as text; `returns="transcript"`
keeps the REPL text the RLM turns show."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dspy.primitives.local_interpreter import LocalInterpreter

from fleet_rlm.sandbox import SandboxOptions
from fleet_rlm.sandbox.session import WorkerSession
from tests.sandbox.conftest import MakeInterpreter

# Cells whose result dspy's own interpreter and ours must agree on exactly.
SAME_AS_DSPY = [
    "1 + 1",
    "'a JSON string is not quoted'",
    "print('printed only')",
    "print('printed, then a value')\n7",
    "x = 1",
    "None",
    "(1, 'two', [3.5, None, True])",
    "{'k': {'nested': [1, 2]}, 'n': 0}",
    "{1: 'int keys become strings'}",
    "float('nan')",
    "{3, 1}",
    "b'bytes'",
    "import json\njson.dumps({'a': [1, 2]})",
    "0",
    "''",
    "[]",
]


@pytest.fixture(scope="module")
def dspy_local() -> Iterator[LocalInterpreter]:
    interp = LocalInterpreter()
    yield interp
    interp.shutdown()


def test_results_match_dspy_local_interpreter(make_interpreter: MakeInterpreter, dspy_local: LocalInterpreter) -> None:
    ours = make_interpreter()
    for code in SAME_AS_DSPY:
        expected = dspy_local.execute(code)
        got = ours.execute(code)
        assert (got, type(got)) == (expected, type(expected)), code


def test_values_keep_their_types(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    assert interp.execute("1 + 1") == 2
    assert interp.execute("'x'") == "x"
    assert interp.execute("import json\njson.dumps({'a': 1})") == '{"a": 1}'  # what dspy.Flex json.loads
    assert interp.execute("2.5") == 2.5 and interp.execute("True") is True
    assert interp.execute("list(range(3))") == [0, 1, 2]
    assert interp.execute("{'ü': '✓'}") == {"ü": "✓"}


def test_non_json_values_are_text_with_what_was_printed(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    assert interp.execute("print('a')\nobject") == "a\n<class 'object'>"
    assert interp.execute("class Odd:\n    def __repr__(self):\n        raise ValueError('no')\nOdd()") == (
        "<unrepresentable Odd: no>"
    )
    assert interp.execute("'y' * 5_000_001") == "'" + "y" * 99_999 + "..."  # too large to cross as a value


def test_a_value_mutated_by_a_thread_still_crosses(make_interpreter: MakeInterpreter) -> None:
    """The value is encoded when the cell ends, so a guest thread changing it cannot break the result frame."""
    interp = make_interpreter()
    code = (
        "import threading, time\nitems = list(range(50))\nstop = False\n"
        "def churn():\n    while not stop:\n        items.append(object()); items.pop()\n"
        "t = threading.Thread(target=churn, daemon=True)\nt.start()\ntime.sleep(0.01)\nitems"
    )
    result: Any = interp.execute(code)
    assert isinstance(result, (list, str))
    interp.execute("stop = True\nt.join()")
    assert interp.execute("len(items)") == 50


def test_transcript_shows_prints_and_the_last_value(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    interp.returns = "transcript"
    assert interp.execute("print('a')\nprint('b')\n'c'") == "a\nb\n'c'"
    assert interp.execute("41 + 1") == "42"
    assert interp.execute("x = 1") is None


def test_a_transcript_host_is_not_sent_the_value(tmp_path: Path) -> None:
    """Encoding a large value costs the worker time: it is only done for hosts that return values."""
    session = WorkerSession(SandboxOptions(data_dir=tmp_path, isolation="reduced"), "w")
    session.wait_ready()
    try:
        cell: dict[str, Any] = {"tools": [], "output_fields": None, "on_call": lambda frame: None}
        assert session.run_cell("[1, 2]", {}, **cell).header["json"] == "[1, 2]"
        header = session.run_cell("[1, 2]", {}, want_value=False, **cell).header
        assert "json" not in header and header["repr"] == "[1, 2]"
    finally:
        session.close()
