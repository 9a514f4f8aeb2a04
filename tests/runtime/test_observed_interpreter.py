"""A forward's setup cells wait for its first model cell: the sandbox is leased then, so dspy.RLM's first LM call
does not wait for a new session's sandbox to start."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dspy.primitives.code_interpreter import CodeInterpreterError
from dspy.primitives.facade import HOST_TOKEN_VAR

from fleet_rlm.config import Settings
from fleet_rlm.runtime.contracts import CancelToken
from fleet_rlm.runtime.control import TurnControl
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.rlm.interpreter import ObservedInterpreter
from fleet_rlm.sandbox.interpreter import SandboxInterpreter
from fleet_rlm.sandbox.options import SandboxOptions
from tests.runtime.conftest import ListSink


@pytest.fixture
def observed(tmp_path: Path) -> Iterator[tuple[ObservedInterpreter, SandboxInterpreter, ListSink]]:
    inner = SandboxInterpreter(options=SandboxOptions(data_dir=tmp_path, isolation="reduced"))
    control = TurnControl(Settings(data_dir=tmp_path).turn_budgets(), CancelToken())
    sink = ListSink()
    interpreter = ObservedInterpreter(
        inner, control=control, emitter=Emitter(sink, run_id="r", session_id="s"), llm_tools={}
    )
    yield interpreter, inner, sink
    interpreter.shutdown()
    control.close()


def test_setup_runs_at_the_first_model_cell_in_the_same_repl(
    observed: tuple[ObservedInterpreter, SandboxInterpreter, ListSink],
) -> None:
    interpreter, inner, sink = observed
    interpreter.start()
    assert interpreter.execute("installed = 41", {HOST_TOKEN_VAR: "token"}) is None
    assert interpreter.execute("loaded = _raw_text.upper()", {"_raw_text": "abc"}) is None
    assert inner.isolation is None  # nothing leased yet: no sandbox was waited for
    assert sink.events == []  # setup cells are silent

    assert interpreter.execute("installed + 1, loaded") == [42, "ABC"]  # run in order, before the model's cell
    assert inner.isolation == "reduced"
    assert [event.type for event in sink.events][:1] == ["code"]
    assert interpreter.execute("installed") == 41  # later setup-free cells see the same REPL


def test_a_failing_setup_cell_ends_the_forward_at_the_first_model_cell(
    observed: tuple[ObservedInterpreter, SandboxInterpreter, ListSink],
) -> None:
    interpreter, _, _ = observed
    interpreter.start()
    assert interpreter.execute("raise ValueError('broken facade')", {HOST_TOKEN_VAR: "token"}) is None
    with pytest.raises(CodeInterpreterError, match=r"(?s)setup failed.*broken facade"):
        interpreter.execute("1 + 1")
