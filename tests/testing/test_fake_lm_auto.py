"""adapter_fields_rule answers any DSPy program by the output fields (and types) its request names."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import dspy

from fleet_rlm.sandbox.factory import interpreter_factory
from fleet_rlm.testing import FakeLMServer, adapter_fields_rule, sub_lm_rule


def test_typed_fields_parse() -> None:
    class Route(dspy.Signature):
        task: str = dspy.InputField()
        mode: Literal["direct", "tools", "rlm"] = dspy.OutputField()
        confidence: float = dspy.OutputField()
        steps: int = dspy.OutputField()
        tags: list[str] = dspy.OutputField()

    with FakeLMServer(rule=adapter_fields_rule()) as lm, dspy.context(lm=lm.dspy_lm()):
        result = dspy.Predict(Route)(task="anything")
    assert result.mode == "direct"
    assert result.confidence == 0.9 and result.steps == 1 and result.tags == []


def test_values_and_choose_override_defaults() -> None:
    def choose(field: str, request: object) -> str | None:
        return "chosen" if field == "title" else None

    rule = adapter_fields_rule({"answer": "42"}, choose=choose)
    with FakeLMServer(rule=rule) as lm, dspy.context(lm=lm.dspy_lm()):
        result = dspy.ChainOfThought("question -> answer, title")(question="q")
    assert (result.answer, result.title) == ("42", "chosen")


def test_rlm_turn_completes_in_the_sandbox(tmp_path: Path) -> None:
    rules = [sub_lm_rule("sub answer"), adapter_fields_rule(answer="done by the fake")]
    factory = interpreter_factory("local", data_dir=tmp_path, workspace_id="w1")
    with FakeLMServer(rules=rules) as lm, dspy.context(lm=lm.dspy_lm()):
        rlm = dspy.RLM("context, query -> answer", interpreter_factory=factory, max_iters=3)
        result = rlm(context="some text", query="what?")
    assert result.answer == "done by the fake"
