"""A real rlm turn (sub-LM batch, a child RLM) folded into one trace: span tree, GenAI attributes, content."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from fleet_rlm.config import Settings
from fleet_rlm.events import EventBase
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.telemetry.trace import RunTrace, ns
from fleet_rlm.testing.fake_lm_dspy import rlm_step
from fleet_rlm.testing.fake_lm_rules import sub_lm_rule
from fleet_rlm.testing.fake_lm_server import FakeLMServer
from tests.runtime.conftest import make_request, run
from tests.runtime.test_recursion import child_rule

FAN_OUT = "subs = llm_query_batched(['alpha', 'beta'])\nkid = rlm_query('child task 0')\nprint(subs, kid)"


def rlm_turn(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> list[EventBase]:
    lm.add_rule(child_rule(grandchild=False))
    lm.add_rule(sub_lm_rule("plain answer"))
    lm.push(rlm_step("Fan out.", FAN_OUT), rlm_step("Done.", "SUBMIT(answer='combined')"))
    result, sink = run(runtime, make_request(settings, "fan out", max_depth=1))
    assert result.status == "succeeded", result
    return sink.events


def fold(events: Iterable[EventBase], *, capture: bool = False) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    events = list(events)
    trace = RunTrace(
        provider.get_tracer("t"),
        run_id=events[0].run_id,
        session_id="s1",
        user_id="u1",
        capture=capture,
        start_time=ns(events[0].ts),
    )
    for event in events[:-1]:
        trace.observe(event)
    trace.finish(events[-1])
    return list(exporter.get_finished_spans())


def tree(spans: list[ReadableSpan]) -> dict[str, Any]:
    by_id = {s.context.span_id: s for s in spans}
    kids: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        kids.setdefault(span.parent.span_id if span.parent else None, []).append(span)

    def node(span: ReadableSpan) -> Any:
        children = sorted(kids.get(span.context.span_id, []), key=lambda s: s.start_time or 0)
        return (span.name, [node(c) for c in children])

    (root,) = kids[None]
    assert all(s.parent is None or s.parent.span_id in by_id for s in spans)
    return node(root)


def test_lm_calls_are_events_of_their_actor(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> None:
    events = rlm_turn(runtime, settings, lm)
    calls = [e for e in events if e.type == "lm_call"]
    root_calls = [c for c in calls if c.actor == "root" and c.sub_call_id is None]
    assert [c.iteration for c in root_calls] == [1, 2] and all(c.role == "root" for c in root_calls)
    sub_starts = {e.call_id for e in events if e.type == "sub_lm_start"}
    subs = [c for c in calls if c.sub_call_id is not None]
    assert {c.sub_call_id for c in subs} == sub_starts and len(subs) == 2
    assert all(c.role == "sub" and c.response_preview == "plain answer" for c in subs)
    child = [c for c in calls if c.actor.startswith("child:")]
    assert len(child) == 1 and child[0].role == "delegate" and child[0].depth == 1
    assert all(c.ok and c.tokens_in > 0 and c.tokens_out > 0 and c.model for c in calls)
    assert "fan out" in root_calls[0].prompt_preview


CHAT = ("chat fake-model", [])
EXPECTED = (
    "fleet.turn",
    [
        ("fleet.route", []),
        (
            "fleet.mode.rlm",
            [
                (
                    "fleet.rlm.iteration 1",
                    [
                        CHAT,
                        (
                            "fleet.sandbox.cell",
                            [
                                ("llm_query_batched", [CHAT]),
                                ("llm_query_batched", [CHAT]),
                                (
                                    "execute_tool rlm_query",
                                    [
                                        (
                                            "invoke_agent child",
                                            [("fleet.rlm.iteration 1", [CHAT, ("fleet.sandbox.cell", [])])],
                                        )
                                    ],
                                ),
                            ],
                        ),
                    ],
                ),
                ("fleet.rlm.iteration 2", [CHAT, ("fleet.sandbox.cell", [])]),
            ],
        ),
    ],
)


def normalized(node: Any) -> Any:
    name, children = node
    return (name.split(":")[0], [normalized(c) for c in children])


def test_one_trace_with_the_span_tree(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> None:
    events = rlm_turn(runtime, settings, lm)
    spans = fold(events)
    assert len({s.context.trace_id for s in spans}) == 1
    assert normalized(tree(spans)) == EXPECTED
    by_name = {s.name: s for s in spans}
    root = by_name["fleet.turn"]
    assert root.attributes["fleet.status"] == "succeeded" and root.attributes["fleet.mode"] == "rlm"
    assert root.attributes["fleet.usage.lm_calls"] == 5 and root.attributes["session.id"] == "s1"
    chats = [s for s in spans if s.name == "chat fake-model"]
    assert len(chats) == 5
    for chat in chats:
        a = chat.attributes
        assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.system"] == "openai"
        assert a["gen_ai.request.model"] == "fake-model" and a["openinference.span.kind"] == "LLM"
        assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
        assert a["fleet.lm.role"] in ("root", "sub", "delegate")
        assert chat.end_time >= chat.start_time and "gen_ai.input.messages" not in a and "input.value" not in a
    assert {c.attributes["fleet.lm.role"] for c in chats} == {"root", "sub", "delegate"}
    child = next(s for s in spans if s.name.startswith("invoke_agent"))
    assert child.attributes["fleet.child.depth"] == 1 and child.attributes["gen_ai.operation.name"] == "invoke_agent"
    for span in spans:  # no content without capture: prompts, answers, code and outputs stay out
        assert not {"input.value", "output.value", "fleet.reasoning", "tool.parameters"} & set(span.attributes)
    starts = sorted((s.start_time, s.end_time) for s in spans if s.parent is not None)
    assert all(root.start_time <= a and b <= root.end_time for a, b in starts)


def test_content_capture_puts_prompts_and_completions_on_spans(
    runtime: TurnRuntime, settings: Settings, lm: FakeLMServer
) -> None:
    spans = fold(rlm_turn(runtime, settings, lm), capture=True)
    subs = [s for s in spans if s.name == "chat fake-model" and s.attributes["fleet.lm.role"] == "sub"]
    assert {s.attributes["input.value"] for s in subs} == {"alpha", "beta"}
    assert all(s.attributes["output.value"] == "plain answer" for s in subs)
    assert all("plain answer" in s.attributes["gen_ai.output.messages"] for s in subs)
    cells = [s for s in spans if s.name == "fleet.sandbox.cell"]
    assert any("llm_query_batched" in str(c.attributes.get("input.value")) for c in cells)
    root = next(s for s in spans if s.name == "fleet.turn")
    assert root.attributes["output.value"] == "combined" and root.attributes["input.value"] == "fan out"
