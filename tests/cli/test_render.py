"""The terminal renderer against scripted sequences of real event models, in each trace mode."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from fleet_rlm.cli.render import TurnRenderer, fold, footer_text
from fleet_rlm.events import (
    BudgetExhausted,
    ChildEnd,
    ChildStart,
    Code,
    ErrorEvent,
    Final,
    Output,
    Reasoning,
    RouteDecision,
    SubLMEnd,
    SubLMStart,
    ToolCall,
    ToolResult,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
    TurnQueued,
    Usage,
    WarningEvent,
)

pytestmark = pytest.mark.db_independent

ENV = {"run_id": "run1", "session_id": "ses1"}
CHILD = {**ENV, "depth": 1, "actor": "child:kid", "parent_id": "kid"}


def trace_events() -> list:
    return [
        RouteDecision(**ENV, mode="rlm", reason="the context is large"),
        Reasoning(**ENV, text="Inspect the context.\nThen count.", iteration=1),
        Code(**ENV, code="n = len(context)\nprint(n)", iteration=1),
        Output(**ENV, stream="stdout", text="1234\n", iteration=1),
        SubLMStart(**ENV, call_id="a", model="m", batch_id="b", batch_index=0, batch_size=3),
        SubLMStart(**ENV, call_id="b", model="m", batch_id="b", batch_index=1, batch_size=3),
        SubLMStart(**ENV, call_id="c", model="m", batch_id="b", batch_index=2, batch_size=3),
        SubLMEnd(**ENV, call_id="a", ok=True),
        SubLMEnd(**ENV, call_id="b", ok=True),
        SubLMEnd(**ENV, call_id="c", ok=False, error="rate limited"),
        ChildStart(**ENV, child_id="kid", task_preview="read chapter two", child_depth=1),
        Code(**CHILD, code="print('chapter')", iteration=1),
        ChildEnd(**ENV, child_id="kid", ok=True, answer_preview="chapter two is short"),
        ToolCall(**ENV, call_id="t", name="grep", args={"pattern": "needle"}),
        ToolResult(**ENV, call_id="t", name="grep", ok=False, error="no match"),
        WarningEvent(**ENV, code="isolation_reduced", message="sandbox isolation is reduced"),
        BudgetExhausted(**ENV, budget="max_iters", limit=20, used=20),
        ErrorEvent(**ENV, code="cell_failed", message="NameError: x", action="the model retries"),
        Usage(**ENV, tokens_in=1500, tokens_out=250, cost_usd=0.0123, lm_calls=7),
        Final(**ENV, answer="The answer is **42**."),
        TurnFinished(**ENV, duration_ms=2500),
    ]


def render(events: list, trace: str, *, show_answer: bool = True) -> tuple[str, TurnRenderer]:
    buffer = io.StringIO()
    renderer = TurnRenderer(Console(file=buffer, width=100, color_system=None), trace, show_answer=show_answer)  # type: ignore[arg-type]
    for event in events:
        renderer.handle(event)
    return buffer.getvalue(), renderer


def test_verbose_shows_every_step_children_indented() -> None:
    text, renderer = render(trace_events(), "verbose")
    for expected in (
        "mode rlm: the context is large",
        "Then count.",
        "n = len(context)",
        "1234",
        "sub-LM batch: 3 prompts",
        "sub-LM batch: 3/3 done, 1 failed",
        "┌ child kid (depth 1): read chapter two",
        "│ ▸ code (iteration 1)",
        "  print('chapter')",
        "└ child kid ✓ chapter two is short",
        "⚙ grep(pattern='needle')",
        "✗ grep: no match",
        "sandbox isolation is reduced [isolation_reduced]",
        "budget max_iters reached (20/20)",
        "error[cell_failed]: NameError: x — the model retries",
        "The answer is 42.",
        "tokens 1,500 in / 250 out · $0.0123 · 7 LM calls · 2.5s",
    ):
        assert expected in text, (expected, text)
    assert renderer.outcome.ok and renderer.outcome.answer == "The answer is **42**."
    assert renderer.outcome.usage["lm_calls"] == 7 and renderer.outcome.run_id == "run1"


def test_compact_folds_code_and_output_to_one_line() -> None:
    text, _ = render(trace_events(), "compact")
    assert "▸ n = len(context)  (+1 lines)" in text
    assert "◂ 1234" in text
    assert "∴ Inspect the context.  (+1 lines)" in text
    assert "print(n)" not in text and "Then count." not in text
    assert "│ ▸ print('chapter')" in text
    assert "The answer is 42." in text and "7 LM calls" in text


def test_a_queued_turn_says_it_waits_for_a_worker() -> None:
    events = [TurnQueued(**ENV, queue="turns"), Final(**ENV, answer="done"), TurnFinished(**ENV)]
    text, _ = render(events, "compact")
    assert "· queued: waiting for a worker (turns)" in text
    assert "queued" not in render(events, "off")[0]


def test_off_shows_only_the_answer() -> None:
    text, renderer = render(trace_events(), "off")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    assert lines == ["The answer is 42."]
    assert renderer.outcome.status == "succeeded"


def test_answer_can_be_left_to_the_caller() -> None:
    text, renderer = render(trace_events(), "compact", show_answer=False)
    assert "The answer is" not in text and renderer.outcome.answer.startswith("The answer is")


def test_failed_and_cancelled_turns_say_so_and_keep_the_error() -> None:
    failed = TurnFailed(**ENV, code="lm_auth_failed", message="the key was refused", action="check the key")
    text, renderer = render([failed], "off")
    assert "turn failed: error[lm_auth_failed]: the key was refused — check the key" in text
    assert renderer.outcome.status == "failed" and renderer.outcome.error["code"] == "lm_auth_failed"
    text, renderer = render([TurnCancelled(**ENV, reason="cancelled by request")], "compact")
    assert "turn cancelled (cancelled by request); the session is kept" in text
    assert renderer.outcome.status == "cancelled" and not renderer.outcome.ok


def test_partial_turns_say_which_budget_stopped_them() -> None:
    events = [Final(**ENV, answer="so far"), TurnFinished(**ENV, outcome="partial", stop_reason="max_llm_calls")]
    text, renderer = render(events, "compact")
    assert "partial answer: the max_llm_calls budget stopped the turn early" in text
    assert renderer.outcome.ok and renderer.outcome.to_json()["outcome"] == "partial"
    assert renderer.outcome.to_json()["stop_reason"] == "max_llm_calls"
    text, renderer = render(trace_events(), "compact")
    assert "partial answer" not in text and renderer.outcome.to_json()["outcome"] == "complete"


def test_child_answers_do_not_replace_the_root_answer() -> None:
    events = [Final(**CHILD, answer="child answer"), Final(**ENV, answer="root answer"), TurnFinished(**ENV)]
    _, renderer = render(events, "off")
    assert renderer.outcome.answer == "root answer"


@pytest.mark.parametrize(
    ("text", "folded"),
    [("", ""), ("one", "one"), ("\n\nfirst\nsecond\nthird", "first  (+2 lines)"), ("x" * 150, "x" * 99 + "…")],
)
def test_fold(text: str, folded: str) -> None:
    assert fold(text) == folded


def test_footer_marks_unknown_cost() -> None:
    assert footer_text({"tokens_in": 1, "lm_calls": 1, "cost_known": False}, 0.25) == (
        "tokens 1 in / 0 out · cost n/a (some calls unpriced) · 1 LM call · 0.2s"
    )
