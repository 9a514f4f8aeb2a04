"""DSPy's callback wrappers, once an LM was built, choose the handler DSPy itself chooses for every kind of
instance, per instance where DSPy decides per instance, and refuse what DSPy refuses; a real program run with a
callback sees the same calls."""

from __future__ import annotations

from typing import Any

import dspy
import pytest
from dspy.primitives.local_interpreter import LocalInterpreter
from dspy.utils import callback as dspy_callback
from dspy.utils.callback import BaseCallback

from fleet_rlm.config import Settings
from fleet_rlm.llm import LMProfile, build_lm
from fleet_rlm.llm import callback_dispatch as memo
from fleet_rlm.testing import FakeLMServer


class Plain(dspy.Module):
    def forward(self, x: str) -> str:
        return x


def _tool(x: int) -> int:
    return x


CASES: list[tuple[str, Any, Any]] = [
    ("predict", dspy.Predict("a -> b"), dspy.Predict.__call__),
    ("module", Plain(), Plain.__call__),
    ("lm", dspy.LM("openai/x"), dspy.LM.__call__),
    ("adapter format", dspy.ChatAdapter(), dspy.ChatAdapter.format),
    ("adapter parse", dspy.ChatAdapter(), dspy.ChatAdapter.parse),
    ("tool", dspy.Tool(_tool), dspy.Tool.__call__),
    ("interpreter execute", LocalInterpreter(), LocalInterpreter.execute),
    ("interpreter start", LocalInterpreter(), LocalInterpreter.start),
]


@pytest.mark.parametrize(("label", "instance", "fn"), CASES, ids=[c[0] for c in CASES])
def test_the_memo_chooses_what_dspy_chooses(label: str, instance: Any, fn: Any) -> None:
    memo.install()
    callback = BaseCallback()
    for _ in range(2):  # the second answer comes from the memo
        assert memo.on_start_handler(callback, instance, fn) == memo._start_handler(callback, instance, fn)
        assert memo.on_end_handler(callback, instance, fn) == memo._end_handler(callback, instance, fn)


def test_an_instance_that_asks_for_decision_requests_is_an_lm_whatever_its_class() -> None:
    callback = BaseCallback()
    plain, asking = Plain(), Plain()
    asking.supports_decision_requests = True
    assert memo.on_start_handler(callback, plain, Plain.__call__) == callback.on_module_start
    assert memo.on_start_handler(callback, asking, Plain.__call__) == callback.on_lm_start
    assert memo.on_end_handler(callback, asking, Plain.__call__) == callback.on_lm_end
    assert memo.on_start_handler(callback, Plain(), Plain.__call__) == callback.on_module_start


def test_a_method_dspy_has_no_handler_for_is_refused_every_time() -> None:
    adapter = dspy.ChatAdapter()
    for _ in range(2):
        with pytest.raises(ValueError, match="Unsupported adapter method"):
            memo.on_start_handler(BaseCallback(), adapter, dspy.ChatAdapter.format_field_description)


class Recorder(BaseCallback):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def on_module_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        self.calls.append(f"module:{type(instance).__name__}")

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        self.calls.append("lm")

    def on_adapter_format_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        self.calls.append("format")

    def on_adapter_parse_end(self, call_id: str, outputs: Any, exception: BaseException | None = None) -> None:
        self.calls.append("parsed")


def test_built_lms_point_dspy_at_the_memo_and_a_program_sees_the_same_calls(
    lm_server: FakeLMServer, llm_settings: Settings
) -> None:
    lm_server.default = "[[ ## b ## ]]\nyes\n\n[[ ## completed ## ]]"
    profile = LMProfile(name="root", model=lm_server.model, api_base=lm_server.base_url, api_key="k")
    lm = build_lm(profile, settings=llm_settings)
    assert dspy_callback._get_on_start_handler is memo.on_start_handler
    assert dspy_callback._get_on_end_handler is memo.on_end_handler
    memo.install()  # idempotent
    assert dspy_callback._get_on_start_handler is memo.on_start_handler
    recorder = Recorder()
    with dspy.context(lm=lm, callbacks=[recorder]):
        assert dspy.Predict("a -> b")(a="q").b == "yes"
        assert dspy.Predict("a -> b")(a="q").b == "yes"  # chosen from the memo the second time
    assert recorder.calls == ["module:Predict", "format", "lm", "parsed"] * 2
