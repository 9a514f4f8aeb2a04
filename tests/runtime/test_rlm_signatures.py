"""The per-turn RLM shares derived signatures between RLMs of the same shape, and prompts stay exactly dspy's."""

from __future__ import annotations

import dspy
import pytest

from fleet_rlm.runtime.rlm.signatures import SharedSignatureRLM, shared_tool, task_signature, with_instructions

pytestmark = pytest.mark.db_independent


def lookup(query: str) -> str:
    """Look a word up."""
    return query


def search(query: str) -> str:
    """Search the corpus."""
    return query


class Runtime:
    """An interpreter factory as dspy sees it: a callable with the runtime's instructions."""

    def __init__(self, instructions: str) -> None:
        self.execution_instructions = instructions

    def __call__(self) -> object:  # never called: no forward pass in these tests
        raise AssertionError("not used")


def build(
    cls: type[dspy.RLM],
    *,
    instructions: str = "Answer.",
    tools: tuple = (lookup,),
    calls: int = 50,
    runtime: str = "local",
) -> dspy.RLM:
    return cls(
        task_signature(instructions), max_llm_calls=calls, tools=list(tools), interpreter_factory=Runtime(runtime)
    )


def prompt_of(rlm: dspy.RLM) -> tuple[str, str, list[str], list[str]]:
    action, extract = rlm.generate_action.signature, rlm.extract.signature
    return action.instructions, extract.instructions, list(action.fields), list(extract.fields)


def test_same_shape_shares_signature_classes() -> None:
    first, second = build(SharedSignatureRLM), build(SharedSignatureRLM)
    assert first.generate_action.signature is second.generate_action.signature
    assert first.extract.signature is second.extract.signature
    assert first._initial_interpreter_rules == second._initial_interpreter_rules


@pytest.mark.parametrize(
    "change",
    [{"instructions": "Answer tersely."}, {"tools": (lookup, search)}, {"calls": 7}, {"runtime": "daytona"}],
)
def test_any_change_in_shape_builds_its_own(change: dict) -> None:
    base, changed = build(SharedSignatureRLM), build(SharedSignatureRLM, **change)
    assert base.generate_action.signature is not changed.generate_action.signature
    assert prompt_of(changed) == prompt_of(build(dspy.RLM, **change))


def test_prompts_are_exactly_dspys() -> None:
    build(SharedSignatureRLM)  # fill the table first: a shared hit must match too
    shared, plain = build(SharedSignatureRLM), build(dspy.RLM)
    assert prompt_of(shared) == prompt_of(plain)
    assert shared._initial_execution_instructions == plain._initial_execution_instructions == "local"
    assert shared._initial_sub_agent_rules == plain._initial_sub_agent_rules


def test_replaced_instructions_are_shared_too() -> None:
    signature = build(SharedSignatureRLM).generate_action.signature
    replaced = with_instructions(signature, "Act step by step.")
    assert replaced is with_instructions(signature, "Act step by step.")
    assert replaced.instructions == "Act step by step." and signature.instructions != replaced.instructions


def test_shared_tools_parse_once_and_call_their_own_closure() -> None:
    def make(tag: str):
        def echo(text: str, times: int = 1) -> str:
            """Echo the text."""
            return f"{tag}:{text * times}"

        return echo

    first, second = shared_tool(make("a")), shared_tool(make("b"))
    assert first.args is second.args  # one parse for the `def`
    assert (first.name, first.desc) == ("echo", "Echo the text.")
    assert first.args == dspy.Tool(make("c")).args
    assert first(text="x", times=2) == "a:xx" and second(text="y") == "b:y"
