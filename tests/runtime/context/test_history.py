"""Session history as a variable, and the running summary kept within its budget without an LM."""

from __future__ import annotations

from fleet_rlm.runtime.context import history_variable, update_summary
from fleet_rlm.runtime.contracts import HistoryTurn


def test_empty_history_is_an_empty_variable() -> None:
    assert history_variable([], "") == ""


def test_history_variable_renders_summary_then_turns_oldest_first() -> None:
    turns = [HistoryTurn("What is 2+2?", "4"), HistoryTurn("And times 3?", "12")]
    text = history_variable(turns, "User is doing arithmetic.")
    assert text == (
        "Summary of the conversation so far:\nUser is doing arithmetic.\n\n"
        "Earlier turns of this session (2, oldest first):\n\n"
        "[turn 1]\nUser: What is 2+2?\nAssistant: 4\n\n"
        "[turn 2]\nUser: And times 3?\nAssistant: 12"
    )
    assert history_variable(turns[:1], "").startswith("Earlier turns of this session (1, oldest first):")


def test_summary_keeps_recent_turns_verbatim() -> None:
    summary = update_summary("", HistoryTurn("first question", "first answer"), 1000)
    summary = update_summary(summary, HistoryTurn("second question", "second answer"), 1000)
    assert summary == (
        "--- turn ---\nUser: first question\nAssistant: first answer\n"
        "--- turn ---\nUser: second question\nAssistant: second answer"
    )


def test_old_turns_shrink_to_topics_within_the_budget() -> None:
    summary = ""
    for index in range(30):
        summary = update_summary(summary, HistoryTurn(f"question {index}; about topic {index}", "a" * 60), 400)
        assert len(summary) <= 400
    assert summary.startswith("Earlier topics: ")
    assert summary.rstrip().endswith("a" * 60)
    assert "User: question 29, about topic 29" not in summary  # only topics are rewritten
    assert "User: question 29; about topic 29" in summary
    assert "question 0," not in summary  # the oldest topics were dropped last
    topics = summary.splitlines()[0].removeprefix("Earlier topics: ").split("; ")
    assert topics == sorted(topics, key=lambda t: int(t.split()[1].rstrip(",")))


def test_long_fields_are_clipped() -> None:
    summary = update_summary("", HistoryTurn("q" * 5000, "a" * 5000), 800)
    assert len(summary) <= 800
    assert "q" * 199 + "…" in summary and "a" * 199 + "…" in summary


def test_a_foreign_summary_is_kept_as_a_topic() -> None:
    summary = update_summary("The user is planning a trip to Lisbon.", HistoryTurn("Hotels?", "Three options."), 500)
    assert summary.startswith("Earlier topics: The user is planning a trip to Lisbon.")
    assert summary.endswith("--- turn ---\nUser: Hotels?\nAssistant: Three options.")


def test_tiny_budgets_still_hold() -> None:
    assert update_summary("", HistoryTurn("hello", "world"), 0) == ""
    assert len(update_summary("", HistoryTurn("hello there", "world " * 20), 30)) <= 30
