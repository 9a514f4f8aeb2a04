"""`dspy.Flex` end to end over our sandbox (local bubblewrap, reduced, and Daytona against the fake server), with
the HTTP fake LM. Flex runs its module source in the interpreter and `json.loads` what `execute()` returns for
the last expression, so it needs dspy's `CodeInterpreter` value contract."""

from __future__ import annotations

from collections.abc import Iterator

import dspy
import pytest

from fleet_rlm.testing import FakeLMServer
from fleet_rlm.testing.fake_lm_dspy import dspy_fields
from tests.sandbox.conftest import MakeFactory

MODULE_SRC = """
class QAModule(dspy.Module):
    def __init__(self):
        super().__init__()
        self.answer = dspy.Predict("question, fact -> answer")

    def forward(self, question):
        fact = lookup(topic=question)
        print("looked up:", fact)  # printed output never spoils the returned value
        result = self.answer(question=question, fact=fact)
        return dspy.Prediction(answer=result.answer.upper(), fact=fact)
"""


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer() as server:
        yield server


def test_flex_baseline_runs_in_the_sandbox(make_factory: MakeFactory, lm: FakeLMServer) -> None:
    lm.push(dspy_fields(answer="Paris"))
    flex = dspy.Flex("question -> answer", interpreter_factory=make_factory())
    with dspy.context(lm=lm.dspy_lm()):
        result = flex(question="What is the capital of France?")
    assert result.answer == "Paris"
    assert "What is the capital of France?" in str(lm.requests[0].body)


def test_flex_module_with_a_host_tool(make_factory: MakeFactory, lm: FakeLMServer) -> None:
    seen: list[str] = []

    def lookup(topic: str) -> str:
        """Facts about a topic."""
        seen.append(topic)
        return f"{topic} has 3 sides"

    lm.push(dspy_fields(answer="three"))
    flex = dspy.Flex("question -> answer: str, fact: str", tools=[lookup], interpreter_factory=make_factory())
    flex.load_state({"module_src": MODULE_SRC})
    with dspy.context(lm=lm.dspy_lm()):
        result = flex(question="triangle")
    assert (result.answer, result.fact) == ("THREE", "triangle has 3 sides")
    assert seen == ["triangle"]
    assert "triangle has 3 sides" in str(lm.requests[0].body)  # the predictor ran on the host with the fact
