"""MCP servers as tools in real turns: a test MCP server (tests/mcp/tool_server.py, stdio) configured by the
operator is called from tools mode (ReAct) and from sandbox code in rlm mode, including a tool that errors and
one that hangs past its time limit; both are tool errors the model sees, never a failed turn. A hostile server
(tests/mcp/hostile_server.py) named `rlm` with a tool `query` and a result over the size limit leaves an RLM
turn working."""

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
HOSTILE = str(Path(__file__).resolve().parents[1] / "mcp" / "hostile_server.py")


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
        react_step("Echo it.", "mcp__kit__echo", text="ping"),
        react_step("Try the failing one.", "mcp__kit__fail", reason="bad input"),
        react_step("Try the slow one.", "mcp__kit__hang"),
        react_step("Done.", "finish"),
        dspy_fields(reasoning="used the tools", answer="echo:ping"),
    )
    result, sink = run(runtime, make_request(settings, "Use the kit tools.", mode="tools"))
    assert result.status == "succeeded" and result.answer == "echo:ping", result
    assert_lifecycle(sink, "turn_finished")
    assert [c.name for c in sink.of("tool_call")] == ["mcp__kit__echo", "mcp__kit__fail", "mcp__kit__hang"]
    results = {r.name: r for r in sink.of("tool_result")}
    assert results["mcp__kit__echo"].ok and results["mcp__kit__echo"].result_preview == "echo:ping"
    assert not results["mcp__kit__fail"].ok and "deliberate failure: bad input" in (
        results["mcp__kit__fail"].error or ""
    )
    assert not results["mcp__kit__hang"].ok and "timed out after 1.5s" in (results["mcp__kit__hang"].error or "")
    prompts = " ".join(str(request.messages) for request in lm.requests)
    assert "deliberate failure: bad input" in prompts and "timed out" in prompts  # the model saw both errors
    assert "mcp__kit__hidden" not in prompts  # not on the allow-list: never offered


def test_rlm_sandbox_code_calls_mcp_tools_through_the_host(
    runtime: TurnRuntime, settings: Settings, lm: FakeLMServer
) -> None:
    code = (
        "print(mcp__kit__echo('from the sandbox'))\n"
        "for name in ('mcp__kit__fail', 'mcp__kit__hang'):\n"
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
    assert "mcp__kit__fail raised" in output and "deliberate failure" in output
    assert "mcp__kit__hang raised" in output and "timed out" in output
    assert [c.name for c in sink.of("tool_call")] == ["mcp__kit__echo", "mcp__kit__fail", "mcp__kit__hang"]
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


def test_a_server_named_rlm_and_a_huge_result_leave_the_rlm_turn_working(
    runtime: TurnRuntime, settings: Settings, lm: FakeLMServer
) -> None:
    """`rlm` + `query` was `rlm_query`, the built-in (dspy.RLM refused the duplicate: the turn failed); a result
    over `mcp_result_max_bytes` was read whole. Now: `mcp__rlm__query`, and a ToolError naming the code."""
    hostile = McpServerSpec(name="rlm", command=sys.executable, args=[HOSTILE], tools=["query", "huge", "fine"])
    runtime.settings = settings.model_copy(update={"mcp_servers": [hostile], "mcp_result_max_bytes": 1 << 20})
    code = (
        "print(mcp__rlm__query('q'))\n"
        "try:\n"
        "    mcp__rlm__huge(mb=16)\n"
        "except ToolError as exc:\n"
        "    print('refused:', exc)\n"
        "print(mcp__rlm__fine())\n"
    )
    lm.push(rlm_step("Call the rlm server's tools.", code), rlm_submit(answer="done"))
    result, sink = run(runtime, make_request(settings, "Use the rlm server.", mode="rlm"))
    assert result.status == "succeeded" and result.answer == "done", result
    output = "".join(o.text for o in sink.of("output"))
    assert "query:q" in output and "fine" in output
    assert "refused: mcp__rlm__huge failed: McpToolError: mcp__rlm__huge failed: mcp_result_too_large" in output
    assert "FLEET_MCP_RESULT_MAX_BYTES" in output
    assert [r.ok for r in sink.of("tool_result")] == [True, False, True]
    assert sink.of("warning") == []
