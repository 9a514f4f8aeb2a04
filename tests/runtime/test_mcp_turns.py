"""MCP servers as tools in real turns: a test MCP server (tests/mcp/tool_server.py, stdio) configured by the
operator is called from tools mode (ReAct) and from sandbox code in rlm mode, including a tool that errors and
one that hangs past its time limit; both are tool errors the model sees, never a failed turn."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fleet_rlm.config import Settings
from fleet_rlm.mcp_servers import McpServerSpec
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.testing.fake_lm_dspy import dspy_fields, rlm_step, rlm_submit
from fleet_rlm.testing.fake_lm_server import FakeLMServer
from tests.runtime.conftest import assert_lifecycle, make_request, run

SERVER = str(Path(__file__).resolve().parents[1] / "mcp" / "tool_server.py")


def react_step(thought: str, tool: str, **args: object) -> str:
    return dspy_fields(next_thought=thought, next_tool_name=tool, next_tool_args=args)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    spec = McpServerSpec(
        name="kit", command=sys.executable, args=[SERVER], tools=["echo", "fail", "hang"], timeout_s=1.5
    )
    return settings.model_copy(update={"mcp_servers": [spec]})


def test_tools_mode_calls_mcp_tools_and_sees_their_errors(
    runtime: TurnRuntime, settings: Settings, lm: FakeLMServer
) -> None:
    lm.push(
        react_step("Echo it.", "kit_echo", text="ping"),
        react_step("Try the failing one.", "kit_fail", reason="bad input"),
        react_step("Try the slow one.", "kit_hang"),
        react_step("Done.", "finish"),
        dspy_fields(reasoning="used the tools", answer="echo:ping"),
    )
    result, sink = run(runtime, make_request(settings, "Use the kit tools.", mode="tools"))
    assert result.status == "succeeded" and result.answer == "echo:ping", result
    assert_lifecycle(sink, "turn_finished")
    assert [c.name for c in sink.of("tool_call")] == ["kit_echo", "kit_fail", "kit_hang"]
    results = {r.name: r for r in sink.of("tool_result")}
    assert results["kit_echo"].ok and results["kit_echo"].result_preview == "echo:ping"
    assert not results["kit_fail"].ok and "deliberate failure: bad input" in (results["kit_fail"].error or "")
    assert not results["kit_hang"].ok and "timed out after 1.5s" in (results["kit_hang"].error or "")
    prompts = " ".join(str(request.messages) for request in lm.requests)
    assert "deliberate failure: bad input" in prompts and "timed out" in prompts  # the model saw both errors
    assert "kit_hidden" not in prompts  # not on the allow-list: never offered


def test_rlm_sandbox_code_calls_mcp_tools_through_the_host(
    runtime: TurnRuntime, settings: Settings, lm: FakeLMServer
) -> None:
    code = (
        "print(kit_echo('from the sandbox'))\n"
        "for name in ('kit_fail', 'kit_hang'):\n"
        "    try:\n"
        "        globals()[name]()\n"
        "    except Exception as exc:\n"
        "        print(name, 'raised', type(exc).__name__, exc)\n"
    )
    lm.push(rlm_step("Call the MCP tools.", code), rlm_submit(answer="done"))
    result, sink = run(runtime, make_request(settings, "Use the kit tools from code.", mode="rlm"))
    assert result.status == "succeeded" and result.answer == "done", result
    assert_lifecycle(sink, "turn_finished")
    output = "".join(o.text for o in sink.of("output"))
    assert "echo:from the sandbox" in output
    assert "kit_fail raised" in output and "deliberate failure" in output
    assert "kit_hang raised" in output and "timed out" in output
    assert [c.name for c in sink.of("tool_call")] == ["kit_echo", "kit_fail", "kit_hang"]
    assert [r.ok for r in sink.of("tool_result")] == [True, False, False]


def test_an_unavailable_server_is_a_warning_not_a_failed_turn(
    runtime: TurnRuntime, settings: Settings, lm: FakeLMServer
) -> None:
    broken = McpServerSpec(name="gone", command="/nonexistent/server", tools=["*"])
    runtime.settings = settings.model_copy(update={"mcp_servers": [broken]})
    lm.push(react_step("Done.", "finish"), dspy_fields(reasoning="nothing to call", answer="ok"))
    result, sink = run(runtime, make_request(settings, "Anything?", mode="tools"))
    assert result.status == "succeeded" and result.answer == "ok"
    assert [w.code for w in sink.of("warning")] == ["mcp_server_unavailable"]
