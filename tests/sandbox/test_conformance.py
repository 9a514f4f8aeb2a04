"""The CodeInterpreter contract every backend must meet (parametrized over backends in conftest)."""

from __future__ import annotations

import hashlib
import threading
import time

import dspy
import pytest
from dspy.primitives.code_interpreter import (
    CodeExecutionError,
    CodeInterpreter,
    CodeInterpreterError,
    FinalOutput,
)

from fleet_rlm.sandbox.protocol import ENCODE_CHUNK_CHARS
from tests.sandbox.conftest import MakeInterpreter


def test_implements_protocol_and_keeps_state(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    assert isinstance(interp, CodeInterpreter)
    assert interp.execute("x = 41\ndef inc(v):\n    return v + 1") is None
    assert interp.execute("print(inc(x))") == "42"
    assert interp.execute("inc(x)") == 42  # the last expression's value, as dspy's interpreters return it


def test_stdout_and_last_expression(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    assert interp.execute("print('a')\nprint('b')\nobject") == "a\nb\n<class 'object'>"
    assert interp.execute("import sys\nprint('err', file=sys.stderr)") == "err"


def test_error_has_cell_traceback_and_prior_output(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    with pytest.raises(CodeExecutionError) as info:
        interp.execute("print('before')\n\ndef f():\n    return 1 / 0\nf()")
    message = str(info.value)
    assert message.startswith("before\nTraceback")
    assert "line 5, in <module>" in message and "line 4, in f" in message
    assert "return 1 / 0" in message and "ZeroDivisionError: division by zero" in message
    assert "worker.py" not in message
    assert interp.execute("print('still alive')") == "still alive"


def test_syntax_error(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    with pytest.raises(SyntaxError) as info:
        interp.execute("x = (1,\nprint(x")
    assert info.value.lineno is not None


def test_submit_typed_fields(make_interpreter: MakeInterpreter) -> None:
    fields = [{"name": "answer", "type": "str"}, {"name": "score", "type": "int"}]
    interp = make_interpreter(output_fields=fields)
    assert interp.execute("SUBMIT(answer='yes', score=3)") == FinalOutput({"answer": "yes", "score": 3})
    assert interp.execute("SUBMIT('no', 4)") == FinalOutput({"answer": "no", "score": 4})
    with pytest.raises(
        CodeExecutionError,
        match=r"SUBMIT\(answer, score\): missing 1 required positional argument: 'score'",
    ):
        interp.execute("SUBMIT(answer='x')")
    with pytest.raises(CodeExecutionError, match="unexpected keyword argument 'extra'"):
        interp.execute("SUBMIT(answer='x', score=1, extra=2)")
    with pytest.raises(CodeExecutionError, match="takes 2 positional arguments but 3 were given"):
        interp.execute("SUBMIT('x', 1, 2)")
    assert interp.execute("import inspect\nstr(inspect.signature(SUBMIT))") == "(answer: str, score: int)"


def test_submit_without_fields_and_non_json_values(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    assert interp.execute("SUBMIT({'k': (1, 2)})") == FinalOutput({"output": {"k": [1, 2]}})
    assert interp.execute("SUBMIT(a={3, 1}, b=object)") == FinalOutput({"a": [1, 3], "b": "<class 'object'>"})


def test_variables_are_rebound_every_cell(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    big = "x" * 300_000
    assert interp.execute("print(len(context), query)", {"context": big, "query": "q"}) == "300000 q"
    interp.execute("context = 'changed'", {"context": big, "query": "q"})
    assert interp.execute("print(len(context))", {"context": big, "query": "q"}) == "300000"
    assert interp.execute("print(len(context), query)", {"context": big + "y", "query": "r"}) == "300001 r"
    data = {"rows": [{"i": i} for i in range(20_000)]}
    assert interp.execute("print(len(data['rows']))", {"data": data}) == "20000"


def test_large_text_inputs_arrive_exactly(make_interpreter: MakeInterpreter) -> None:
    """Sent in encoded chunks (protocol.Body), a text with every kind of character arrives as it was."""
    text = "a" * (ENCODE_CHUNK_CHARS - 1) + "😀é€\ud800" + "z" * 1000 + "\udfff"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    interp = make_interpreter()
    code = "import hashlib\nprint(len(context), hashlib.sha256(context.encode('utf-8', 'surrogatepass')).hexdigest())"
    assert interp.execute(code, {"context": text}) == f"{len(text)} {digest}"


def test_host_tools_and_errors(make_interpreter: MakeInterpreter) -> None:
    def lookup(key: str, default: str = "none") -> str:
        if key == "boom":
            raise ValueError("no such key")
        return f"{key}={default}"

    interp = make_interpreter(tools={"lookup": lookup, "llm_query": lambda prompt: prompt.upper()})
    assert interp.execute("print(lookup('a', default='b'), llm_query('hi'))") == "a=b HI"
    code = "try:\n    lookup('boom')\nexcept ToolError as e:\n    print(type(e).__mro__[1].__name__, e)"
    out = interp.execute(code)
    assert out == "RuntimeError lookup failed: ValueError: no such key"
    assert interp.execute("print(llm_query_batched(['a', 'b', 'c']))") == "['A', 'B', 'C']"


def test_concurrent_guest_calls(make_interpreter: MakeInterpreter) -> None:
    active, peak, lock = [0], [0], threading.Lock()

    def slow(prompt: str) -> str:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.2)
        with lock:
            active[0] -= 1
        return prompt[::-1]

    interp = make_interpreter(tools={"llm_query": slow}, batch_concurrency=4)
    code = (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "with ThreadPoolExecutor(4) as ex:\n    r = list(ex.map(llm_query, ['ab', 'cd', 'ef', 'gh']))\n"
        "print(r, llm_query_batched(['xy'] * 8)[:2])"
    )
    assert interp.execute(code) == "['ba', 'dc', 'fe', 'hg'] ['yx', 'yx']"
    assert peak[0] > 1


def test_tools_see_caller_dspy_context(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(tools={"which_lm": lambda: str(dspy.settings.lm)})
    with dspy.context(lm="marker-lm"):  # type: ignore[arg-type]
        assert interp.execute("print(which_lm())") == "marker-lm"


def test_output_is_capped_head_and_tail(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(output_max_chars=1000)
    out = interp.execute("print('HEAD' + 'x' * 200_000 + 'TAIL')")
    assert out.startswith("HEADx") and out.endswith("xTAIL")
    assert "bytes of output omitted" in out and len(out) < 1200


def test_timeout_interrupts_and_keeps_state(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(cell_timeout_s=1.0)
    interp.execute("kept = 'yes'")
    with pytest.raises(CodeExecutionError, match="interrupted") as info:
        interp.execute("print('started')\nimport time\nwhile True:\n    time.sleep(0.01)")
    assert "started" in str(info.value) and "KeyboardInterrupt" in str(info.value)
    assert interp.execute("print(kept)") == "yes"


def test_dead_worker_is_replaced_and_model_told(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    interp.execute("lost = 1")
    with pytest.raises(CodeExecutionError, match=r"\[sandbox reset\].*exited with status 3"):
        interp.execute("import os\nos._exit(3)", {"context": "abc"})
    assert interp.execute("print(context, 'lost' in globals())", {"context": "abc"}) == "abc False"


def test_workspace_roots_visible_and_persistent(make_interpreter: MakeInterpreter) -> None:
    first = make_interpreter()
    out = first.execute(
        "import os\nprint(os.getcwd() == WORKSPACE_ROOT, sorted(os.listdir(WORKSPACE_ROOT)))\n"
        "print(open(os.path.join(MEMORY_DIR, 'MEMORIES.md')).readline().strip())\n"
        "_ = open(os.path.join(ARTIFACTS_DIR, 'note.txt'), 'w').write('kept')"
    )
    assert out.splitlines()[:2] == ["True ['artifacts', 'buffers', 'memory', 'meta']", "# Memories"]
    first.shutdown()
    second = make_interpreter()
    assert second.execute("print(open(ARTIFACTS_DIR + '/note.txt').read())") == "kept"


def test_shutdown_is_final(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    interp.execute("1")
    interp.shutdown()
    interp.shutdown()
    with pytest.raises(CodeInterpreterError):
        interp.execute("1")


def test_invalid_names_are_interpreter_errors(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    with pytest.raises(CodeInterpreterError):
        interp.execute("1", {"SUBMIT": 1})
