"""auto routing of large contexts, child RLMs (parallel, depth-limited, attributed events), shared LM budget."""

from __future__ import annotations

import re
import threading

from fleet_rlm.config import Settings
from fleet_rlm.runtime.contracts import ContextSource
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.testing.fake_lm_dspy import rlm_step, rlm_submit
from fleet_rlm.testing.fake_lm_rules import is_adapter_request, sub_lm_rule
from fleet_rlm.testing.fake_lm_server import FakeLMServer
from fleet_rlm.testing.fake_lm_types import RecordedRequest
from tests.runtime.conftest import assert_lifecycle, make_request, run

CHILD_TASK = re.compile(r"Variable: `task`.*?Preview:\s*```\s*(child task \d|grandchild task)", re.DOTALL)


def child_rule(grandchild: bool = True):  # type: ignore[no-untyped-def]
    """Children answer by their task: child task 0 first delegates once more (depth 2), then submits."""
    steps: dict[str, int] = {}
    lock = threading.Lock()

    def rule(request: RecordedRequest) -> str | None:
        if not is_adapter_request(request):
            return None
        match = CHILD_TASK.search(request.last_user_text)
        if match is None:
            return None
        task = match.group(1)
        with lock:
            step = steps[task] = steps.get(task, 0) + 1
        if task == "child task 0" and grandchild and step == 1:
            return rlm_step("Delegate deeper.", "deep = rlm_query('grandchild task')\nprint(deep)")
        if task == "grandchild task" and step == 1:
            return rlm_step("At the depth limit.", "print(rlm_query('too deep'))")
        return rlm_submit(answer=f"answer of {task}")

    return rule


def test_auto_routes_huge_context_to_rlm_without_router_call(
    runtime: TurnRuntime, settings: Settings, lm: FakeLMServer
) -> None:
    lm.push(rlm_step("Measure.", "print(len(context))"), rlm_submit(answer="measured"))
    huge = ContextSource(kind="text", name="big.txt", text="x" * 5_000_000)
    result, sink = run(runtime, make_request(settings, "How long is it?", mode="auto", sources=(huge,)))
    assert result.status == "succeeded" and result.execution_mode == "rlm"
    decision = sink.of("route_decision")[0]
    assert decision.mode == "rlm" and decision.context_chars >= 5_000_000 and "threshold" in decision.reason
    assert sink.of("context_loaded")[0].chars >= 5_000_000
    assert len(lm.requests) == 2 and all(is_adapter_request(r) for r in lm.requests)
    assert "task" in lm.requests[0].last_user_text and "5000" in sink.of("output")[0].text


def test_auto_asks_router_for_small_context(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> None:
    from fleet_rlm.testing.fake_lm_dspy import dspy_fields

    lm.push(dspy_fields(mode="direct", reason="simple question"), dspy_fields(reasoning="easy", answer="Paris"))
    result, sink = run(runtime, make_request(settings, "Capital of France?", mode="auto"))
    assert result.answer == "Paris" and result.execution_mode == "direct"
    decision = sink.of("route_decision")[0]
    assert decision.mode == "direct" and decision.reason == "simple question"
    assert result.fields["programs"]["router"] == "builtin-1"


def test_parallel_children_depth_two(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> None:
    lm.add_rule(child_rule())
    lm.add_rule(sub_lm_rule("plain answer"))
    lm.push(
        rlm_step(
            "Fan out.",
            "res = rlm_query_batched(['child task 0', 'child task 1', 'child task 2', 'child task 3'])\nprint(res)",
        ),
        rlm_step("Combine.", "SUBMIT(answer=' | '.join(res))"),
    )
    result, sink = run(runtime, make_request(settings, "fan out", max_depth=2, batch_concurrency=4))
    assert result.status == "succeeded", result
    assert result.answer.split(" | ") == [f"answer of child task {i}" for i in range(4)]
    assert_lifecycle(sink, "turn_finished")
    starts = sink.of("child_start")
    assert sorted(s.child_depth for s in starts) == [1, 1, 1, 1, 2]
    depth_of = {s.child_id: s.child_depth for s in starts}
    for start in starts:  # a child_start is emitted by the parent: depth one less than the child's
        assert start.depth == start.child_depth - 1
    for event in sink.events:
        if event.actor.startswith("child:"):
            child_id = event.actor.split(":", 1)[1]
            assert event.parent_id == child_id and event.depth == depth_of[child_id]
        else:
            assert event.depth == 0 and event.actor == "root"
    ends = sink.of("child_end")
    assert len(ends) == 5 and all(e.ok for e in ends)
    children_code = [e for e in sink.of("code") if e.depth == 1]
    assert len(children_code) == 5  # four submits + child 0's delegation step
    warning = sink.of("warning")
    assert len(warning) == 1 and warning[0].code == "max_depth" and warning[0].depth == 2
    degraded = [e for e in sink.of("sub_lm_start") if e.depth == 2]
    assert len(degraded) == 1 and "too deep" in degraded[0].prompt_preview
    assert sink.of("child_progress")


def test_shared_llm_call_budget_stops_the_tree(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> None:
    lm.add_rule(child_rule(grandchild=False))
    lm.push(
        rlm_step(
            "Fan out.",
            "res = rlm_query_batched(['child task 0', 'child task 1', 'child task 2', 'child task 3'])\nprint(res)",
        ),
        rlm_submit(answer="never reached"),
    )
    request = make_request(settings, "fan out", max_llm_calls=3, batch_concurrency=4)
    result, sink = run(runtime, request)
    assert result.status == "succeeded" and result.fields["budget_exhausted"] == "max_llm_calls"
    assert result.answer.startswith("(Partial answer") and "Fan out." in result.answer
    assert (result.outcome, result.stop_reason) == ("partial", "max_llm_calls")
    exhausted = sink.of("budget_exhausted")
    assert len(exhausted) == 1 and exhausted[0].budget == "max_llm_calls" and exhausted[0].limit == 3
    assert len(lm.requests) <= 3
    assert sink.of("usage")[-1].lm_calls <= 3
    assert_lifecycle(sink, "turn_finished")
