"""The runtime's MCP tool bridge against a real MCP server (tests/mcp/tool_server.py) over stdio and HTTP:
allow-list, results, tool errors and timeouts as McpToolError, an unreachable server as a warning event,
blocked URLs for users, and no secrets in a stdio server's environment."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from fleet_rlm.config import Settings
from fleet_rlm.mcp_servers import McpServerSpec
from fleet_rlm.runtime.contracts import CancelToken
from fleet_rlm.runtime.control import TurnControl
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.mcp_tools import McpToolbox, McpToolError

from .tool_server import serve_http

SERVER = str(Path(__file__).with_name("tool_server.py"))


class Sink:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def emit(self, event: Any) -> None:
        self.events.append(event)


def stdio_spec(**extra: Any) -> McpServerSpec:
    fields: dict[str, Any] = {"name": "t", "command": sys.executable, "args": [SERVER], "tools": ["echo", "add"]}
    fields.update(extra)
    return McpServerSpec(**fields)


def toolbox(settings: Settings, **kwargs: Any) -> tuple[McpToolbox, Sink, CancelToken]:
    limits = settings.turn_budgets()
    cancel = CancelToken()
    sink = Sink()
    box = McpToolbox(settings, TurnControl(limits, cancel), Emitter(sink, run_id="r", session_id="s"), **kwargs)
    return box, sink, cancel


def test_stdio_server_tools_are_allow_listed_and_callable(settings: Settings, monkeypatch: Any) -> None:
    monkeypatch.setenv("DSPY_LLM_API_KEY", "sk-secret")  # the server's process must not inherit it
    spec = stdio_spec(tools=["echo", "add", "fail", "hang", "env_probe"], timeout_s=1.0)
    box, sink, _ = toolbox(settings.model_copy(update={"mcp_tool_timeout_s": 1.0}), servers=[spec])
    try:
        tools = {tool.name: tool for tool in box.tools()}
        assert set(tools) == {
            "mcp__t__echo",
            "mcp__t__add",
            "mcp__t__fail",
            "mcp__t__hang",
            "mcp__t__env_probe",
        }  # never mcp__t__hidden
        assert tools["mcp__t__echo"](text="hi") == "echo:hi"
        assert tools["mcp__t__add"](a=2, b=3) == 5
        assert tools["mcp__t__env_probe"]() == "none"
        with pytest.raises(McpToolError, match="deliberate failure"):
            tools["mcp__t__fail"](reason="x")
        started = time.monotonic()
        with pytest.raises(McpToolError, match="timed out"):
            tools["mcp__t__hang"]()
        assert time.monotonic() - started < 5
        assert tools["mcp__t__echo"](text="still alive") == "echo:still alive"  # a timeout leaves the session usable
    finally:
        box.close()
    assert sink.events == []


def test_http_server_and_an_unavailable_one(settings: Settings) -> None:
    missing = McpServerSpec(name="gone", command="/nonexistent/mcp-server", tools=["*"])
    with serve_http() as url:
        spec = McpServerSpec(name="web", url=url, tools=["echo"])
        box, sink, _ = toolbox(settings, servers=[spec, missing])
        try:
            tools = {tool.name: tool for tool in box.tools()}
            assert set(tools) == {"mcp__web__echo"}
            assert tools["mcp__web__echo"](text="over http") == "echo:over http"
        finally:
            box.close()
    warnings = [e for e in sink.events if e.type == "warning"]
    assert [w.code for w in warnings] == ["mcp_server_unavailable"] and "'gone'" in warnings[0].message


def test_a_users_private_url_is_refused_in_token_mode(settings: Settings) -> None:
    secured = settings.model_copy(update={"auth_mode": "token"})
    with serve_http() as url:
        spec = McpServerSpec(name="web", url=url, tools=["echo"])
        box, sink, _ = toolbox(secured, user_servers=[spec])
        try:
            assert box.tools() == []
        finally:
            box.close()
    assert [e.code for e in sink.events] == ["mcp_server_unavailable"]
    assert "private" in sink.events[0].message or "loopback" in sink.events[0].message


def test_a_stopped_turn_wakes_a_hanging_call(settings: Settings) -> None:
    from fleet_rlm.runtime.errors import TurnStop

    box, _, cancel = toolbox(settings, servers=[stdio_spec(tools=["hang"], timeout_s=60)])
    try:
        hang = box.tools()[0]
        import threading

        threading.Timer(0.5, cancel.cancel).start()
        started = time.monotonic()
        with pytest.raises(TurnStop):
            hang()
        assert time.monotonic() - started < 5
    finally:
        box.close()
