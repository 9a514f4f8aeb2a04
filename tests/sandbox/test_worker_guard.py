"""The worker's machinery survives guest code rebinding what it shares with the worker (issue #40), and a dead
worker follows the documented error contract (docs/security.md, "Protocol frames are bounded").

Guest code runs in the worker's process. It gets its own copy of `builtins`, and the worker calls snapshots of
the stdlib modules it uses, so a cell that sets `builtins.len = None`, deletes `builtins.open`, or rebinds
`os.write`, `json.dumps` or `sys.stdout` changes its own view only: the next cell runs and the REPL keeps its
variables. A worker that dies anyway is replaced and the model told (`CodeExecutionError`, a subclass of
`CodeInterpreterError`), until `max_resets`; then the interpreter is done (`CodeInterpreterError`).
"""

from __future__ import annotations

import pytest
from dspy.primitives.code_interpreter import CodeExecutionError, CodeInterpreterError

from tests.sandbox.conftest import MakeInterpreter

MUTATIONS = {
    "len": "import builtins\nbuiltins.len = None",
    "print": "import builtins\nbuiltins.print = None",
    "open": "import builtins\ndel builtins.open",
    "types": "import builtins\nfor name in ('isinstance', 'str', 'repr', 'int', 'dict', 'list', 'bool'):\n"
    "    setattr(builtins, name, None)",
    "import": "import builtins\nbuiltins.__import__ = None",
    "everything": "import builtins\nfor name in list(vars(builtins)):\n    if not name.startswith('__'):\n"
    "        delattr(builtins, name)",
    "json": "import json\njson.dumps = json.loads = None\njson.JSONEncoder = None",
    "stdio": "import sys\nsys.stdout = sys.stderr = None\nsys.stdin = 5",
    "os": "import os\nos.write = os.read = os.readv = os.close = os.dup2 = os.pipe = None",
    "modules": "import select, struct, _thread, _signal, _json\nselect.select = struct.Struct = None\n"
    "_thread.allocate_lock = _signal.signal = _json.make_encoder = None",
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_guest_rebinding_shared_names_keeps_the_worker(make_interpreter: MakeInterpreter, mutation: str) -> None:
    interp = make_interpreter()
    interp.execute("kept = 41")
    try:
        interp.execute(MUTATIONS[mutation])
    except CodeExecutionError as exc:  # the cell may break itself; it must not break the worker
        assert "[sandbox reset]" not in str(exc)
    assert interp.execute("kept + 1") == 42
    assert interp.execute("kept * 2") == 82  # and again: the worker's own calls after a cell still work


def test_the_guest_sees_its_own_change(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    interp.execute("import builtins\nbuiltins.len = lambda value: 'mine'")
    assert interp.execute("len([1, 2])") == "mine"  # as in any REPL: the guest's own view changed
    assert interp.execute("import json\njson.dumps([1, 2])") == "[1, 2]"  # modules keep the real builtins


def test_a_dead_worker_is_recoverable_until_max_resets(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(max_resets=1)
    interp.execute("kept = 1")
    with pytest.raises(CodeExecutionError, match=r"^\[sandbox reset\]") as first:
        interp.execute("import os\nos._exit(3)")
    assert isinstance(first.value, CodeInterpreterError)  # dspy's base class: callers catching it still do
    assert interp.execute("print(6 * 7)") == "42"  # replaced: a fresh REPL
    with pytest.raises(CodeInterpreterError, match="giving up") as second:
        interp.execute("import os\nos._exit(3)")
    assert type(second.value) is CodeInterpreterError  # terminal, as dspy's contract asks
    with pytest.raises(CodeInterpreterError):
        interp.execute("print(1)")
