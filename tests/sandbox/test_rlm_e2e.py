"""dspy.RLM driven end to end through our factory, against the fake OpenAI-compatible LM server.

dspy 3.4.1's RLM takes `interpreter_factory=` (a zero-argument callable) in its constructor and per call;
`execution_instructions` on the factory lands in the action prompt.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dspy
import pytest

from fleet_rlm.sandbox import SandboxPool
from fleet_rlm.sandbox.factory import interpreter_factory
from fleet_rlm.testing.fake_lm_dspy import rlm_step, rlm_submit
from fleet_rlm.testing.fake_lm_rules import sub_lm_rule
from fleet_rlm.testing.fake_lm_server import FakeLMServer


@pytest.fixture
def fake_lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(rule=sub_lm_rule(lambda prompt: f"summary of {len(prompt)} chars")) as server:
        yield server


def test_rlm_runs_in_sandbox(fake_lm: FakeLMServer, tmp_path: Path, backend: str) -> None:
    fake_lm.push(
        rlm_step("Look at the data.", "print(len(context), context[:5])"),
        rlm_step("Ask a sub-LM.", "note = llm_query('describe: ' + context[:20])\nprint(note)"),
        rlm_step("Submit.", "SUBMIT(answer=note, length=len(context))"),
    )
    factory = interpreter_factory("local", data_dir=tmp_path, isolation=backend)
    rlm = dspy.RLM("context -> answer: str, length: int", max_iters=5, interpreter_factory=factory)
    with dspy.context(lm=fake_lm.dspy_lm()):
        result = rlm(context="hello world " * 1000)
    assert result.answer == "summary of 30 chars" and result.length == 12000
    outputs = [step["output"] for step in result.trajectory]
    assert outputs[0] == "12000 hello"
    action_prompt = str(fake_lm.requests[0].body)
    assert "Execution environment" in action_prompt and "WORKSPACE_ROOT" in action_prompt


def test_rlm_errors_are_fed_back(fake_lm: FakeLMServer, tmp_path: Path, backend: str) -> None:
    fake_lm.push(
        rlm_step("Oops.", "print('partial')\nundefined_name"),
        rlm_submit(answer="recovered"),
    )
    factory = interpreter_factory("local", data_dir=tmp_path, isolation=backend)
    rlm = dspy.RLM("question -> answer", max_iters=3, interpreter_factory=factory)
    with dspy.context(lm=fake_lm.dspy_lm()):
        result = rlm(question="q")
    assert result.answer == "recovered"
    first = result.trajectory[0]["output"]
    assert "partial" in first and "NameError: name 'undefined_name' is not defined" in first


def test_session_keeps_repl_state_across_turns(fake_lm: FakeLMServer, tmp_path: Path, backend: str) -> None:
    from fleet_rlm.sandbox import SandboxOptions

    pool = SandboxPool(SandboxOptions(data_dir=tmp_path, isolation=backend), size=1)  # type: ignore[arg-type]
    try:
        factory = interpreter_factory("local", pool=pool, session_id="s1")
        fake_lm.push(
            rlm_step("Remember.", "memo = 'from turn one'\nprint('stored')"),
            rlm_submit(answer="ok"),
            rlm_step("Recall.", "SUBMIT(answer=memo)"),
        )
        rlm = dspy.RLM("question -> answer", max_iters=3, interpreter_factory=factory)
        with dspy.context(lm=fake_lm.dspy_lm()):
            assert rlm(question="turn 1").answer == "ok"
            assert rlm(question="turn 2").answer == "from turn one"
    finally:
        pool.shutdown()
