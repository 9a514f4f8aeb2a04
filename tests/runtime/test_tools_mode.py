"""tools mode: DSPy ReAct over the host tools (attachments, workspace, memory, delegate_to_rlm)."""

from __future__ import annotations

from fleet_rlm.config import Settings
from fleet_rlm.runtime.contracts import ContextSource
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.testing.fake_lm_dspy import dspy_fields, rlm_submit
from fleet_rlm.testing.fake_lm_server import FakeLMServer
from tests.runtime.conftest import assert_lifecycle, make_request, run


def react_step(thought: str, tool: str, **args: object) -> str:
    return dspy_fields(next_thought=thought, next_tool_name=tool, next_tool_args=args)


def test_tools_mode_reads_attachment_and_writes_memory(
    runtime: TurnRuntime, settings: Settings, lm: FakeLMServer
) -> None:
    notes = ContextSource(kind="text", name="notes.txt", text="The launch code is 7421.\nNothing else.")
    lm.push(
        react_step("Search the notes.", "search_attachments", pattern="launch code"),
        react_step("Save it.", "append_memory", note="launch code 7421"),
        react_step("Delegate a check.", "delegate_to_rlm", task="verify"),
        rlm_submit(answer="verified"),  # the delegated RLM's only step, while delegate_to_rlm runs
        react_step("Done.", "finish"),
        dspy_fields(reasoning="found it", answer="7421"),
    )
    result, sink = run(runtime, make_request(settings, "What is the launch code?", mode="tools", sources=(notes,)))
    assert result.status == "succeeded" and result.answer == "7421", result
    assert_lifecycle(sink, "turn_finished")
    calls = sink.of("tool_call")
    assert [c.name for c in calls] == ["search_attachments", "append_memory", "delegate_to_rlm"]
    results = {r.name: r for r in sink.of("tool_result")}
    assert "7421" in results["search_attachments"].result_preview and results["delegate_to_rlm"].ok
    assert "verified" in results["delegate_to_rlm"].result_preview
    (memory,) = sink.of("memory_updated")
    assert memory.path == "memory/MEMORIES.md"
    memories = (settings.workspaces_dir / "w1" / "memory" / "MEMORIES.md").read_text()
    assert "launch code 7421" in memories
    reasoning = [r.text for r in sink.of("reasoning")]
    assert reasoning[:2] == ["Search the notes.", "Save it."]
    assert sink.of("context_loaded")[0].name == "notes.txt"
