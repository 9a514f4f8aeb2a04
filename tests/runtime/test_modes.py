"""Each execution mode end to end over HTTP, plus errors that must become turn_failed."""

from __future__ import annotations

from fleet_rlm.config import Settings
from fleet_rlm.runtime.contracts import ContextSource
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.testing import RecordedRequest, adapter_fields_rule, requested_output_fields
from fleet_rlm.testing.fake_lm_dspy import dspy_fields, rlm_step, rlm_submit
from fleet_rlm.testing.fake_lm_rules import sub_lm_rule
from fleet_rlm.testing.fake_lm_server import FakeLMServer
from tests.runtime.conftest import assert_lifecycle, make_request, run


def test_direct_mode(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> None:
    lm.push(dspy_fields(reasoning="Two plus two.", answer="4"))
    result, sink = run(runtime, make_request(settings, "What is 2+2?", mode="direct"))
    assert result.status == "succeeded" and result.answer == "4"
    assert result.execution_mode == "direct" and result.program_version == "builtin-1"
    assert_lifecycle(sink, "turn_finished")
    types = sink.types()
    assert types.index("route_decision") < types.index("reasoning") < types.index("final")
    assert sink.of("reasoning")[0].text == "Two plus two."
    assert sink.of("final")[0].answer == "4"
    usage = sink.of("usage")[-1]
    assert usage.lm_calls == 1 and usage.by_role["root"].lm_calls == 1
    assert result.usage["lm_calls"] == 1
    assert len(lm.requests) == 1


def test_rlm_mode_streams_steps(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> None:
    lm.add_rule(sub_lm_rule(lambda prompt: f"echo:{prompt[-5:]}"))
    lm.push(
        rlm_step("Look first.", "print(task.upper())"),
        rlm_step("Ask sub-LMs.", "res = llm_query_batched(['one', 'two', 'three'])\nprint(res)"),
        rlm_submit(answer="done"),
    )
    result, sink = run(runtime, make_request(settings, "shout this"))
    assert result.status == "succeeded" and result.answer == "done", result
    assert_lifecycle(sink, "turn_finished")
    codes = sink.of("code")
    outputs = sink.of("output")
    assert [c.iteration for c in codes] == [1, 2, 3]
    assert outputs[0].text == "SHOUT THIS" and outputs[0].iteration == 1
    assert "echo:three" in outputs[1].text
    types = sink.types()
    first_reasoning, first_code, first_output = (types.index(k) for k in ("reasoning", "code", "output"))
    assert first_reasoning < first_code < first_output
    starts = sink.of("sub_lm_start")
    ends = sink.of("sub_lm_end")
    assert sorted(s.batch_index for s in starts) == [0, 1, 2] and {s.batch_size for s in starts} == {3}
    assert len({s.batch_id for s in starts}) == 1
    assert {e.call_id for e in ends} == {s.call_id for s in starts} and all(e.ok for e in ends)
    usage = sink.of("usage")[-1]
    assert usage.lm_calls == 6 and usage.iterations == 3


def test_missing_model_fails_cleanly(settings: Settings, lm: FakeLMServer) -> None:
    empty = settings.model_copy(update={"lm_model": None})
    runtime = TurnRuntime(empty)
    try:
        result, sink = run(runtime, make_request(empty, "hi", mode="direct"))
    finally:
        runtime.shutdown()
    assert result.status == "failed" and result.error and result.error["code"] == "model_not_configured"
    assert_lifecycle(sink, "turn_failed")
    error = sink.of("error")[0]
    assert error.code == "model_not_configured" and error.action and error.fatal
    assert sink.of("turn_failed")[0].code == "model_not_configured"


def test_provider_error_fails_cleanly(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> None:
    lm.push({"status": 500, "error": "boom"})
    result, sink = run(runtime, make_request(settings, "hi", mode="direct"))
    assert result.status == "failed" and result.error and result.error["code"] == "lm_server_error"
    assert_lifecycle(sink, "turn_failed")


def _malformed_router(request: RecordedRequest) -> str | None:
    """The router's requests (they ask for a `mode` field) get prose the adapters cannot parse."""
    return "I think you should probably read it carefully." if "mode" in requested_output_fields(request) else None


def test_unparseable_router_answer_with_context_falls_back_to_rlm(
    runtime: TurnRuntime, settings: Settings, lm: FakeLMServer
) -> None:
    lm.add_rule(_malformed_router)
    lm.add_rule(adapter_fields_rule(answer="the code is 7"))
    document = ContextSource(kind="text", name="notes.txt", text="the code is 7\n" * 20)
    result, sink = run(runtime, make_request(settings, "what is the code?", mode="auto", sources=(document,)))
    assert result.status == "succeeded", result
    assert result.execution_mode == "rlm" and result.answer == "the code is 7"
    (decision,) = sink.of("route_decision")
    assert decision.mode == "rlm"
    assert "could not" in decision.reason and "context is attached" in decision.reason
    assert any("mode" in requested_output_fields(r) for r in lm.requests)  # the router really was asked


def test_unparseable_router_answer_without_context_falls_back_to_direct(
    runtime: TurnRuntime, settings: Settings, lm: FakeLMServer
) -> None:
    lm.add_rule(_malformed_router)
    lm.add_rule(adapter_fields_rule(answer="hello"))
    result, sink = run(runtime, make_request(settings, "say hello", mode="auto"))
    assert result.status == "succeeded" and result.execution_mode == "direct"
    assert "nothing is attached" in sink.of("route_decision")[0].reason
