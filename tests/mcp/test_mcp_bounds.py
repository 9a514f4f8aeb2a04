"""What an MCP server sends is bounded before it is parsed, over stdio and HTTP, against a hostile server written
with the SDK (tests/mcp/hostile_server.py): a result over `mcp_result_max_bytes`, nested deeper than
`mcp_result_max_depth` or with more than `mcp_result_max_items` values is the tool error `mcp_result_too_large`,
the session keeps working, and this process does not grow by the result. Tool names are unambiguous: two
servers of one name are left out with a warning, never first-match-wins."""

from __future__ import annotations

import resource
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fleet_rlm.config import Settings
from fleet_rlm.mcp_servers import McpServerSpec
from fleet_rlm.runtime.contracts import CancelToken
from fleet_rlm.runtime.control import TurnControl
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.mcp_limits import ResultLimits, ShapeMeter
from fleet_rlm.runtime.mcp_stdio import LineReader
from fleet_rlm.runtime.mcp_tools import McpToolbox, McpToolError

from .hostile_server import serve_http

HOSTILE = str(Path(__file__).with_name("hostile_server.py"))
TOOLS = ["huge", "deep", "many", "fine"]
MB = 1024 * 1024


class Sink:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def emit(self, event: Any) -> None:
        self.events.append(event)


def toolbox(
    settings: Settings, *specs: McpServerSpec, users: tuple[McpServerSpec, ...] = ()
) -> tuple[McpToolbox, Sink]:
    sink = Sink()
    control = TurnControl(settings.turn_budgets(), CancelToken())
    emitter = Emitter(sink, run_id="r", session_id="s")
    return McpToolbox(settings, control, emitter, servers=specs, user_servers=users), sink


@pytest.fixture(params=["stdio", "http"])
def hostile(request: pytest.FixtureRequest) -> Iterator[McpServerSpec]:
    if request.param == "stdio":
        yield McpServerSpec(name="bad", command=sys.executable, args=[HOSTILE], tools=TOOLS, timeout_s=60)
        return
    with serve_http() as url:
        yield McpServerSpec(name="bad", url=url, tools=TOOLS, timeout_s=60)


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def test_results_over_the_limits_are_tool_errors_and_the_session_goes_on(
    settings: Settings, hostile: McpServerSpec
) -> None:
    limited = settings.model_copy(update={"mcp_result_max_bytes": 4 * MB, "mcp_result_max_items": 100_000})
    box, sink = toolbox(limited, hostile)
    try:
        tools = {tool.name: tool for tool in box.tools()}
        assert set(tools) == {f"mcp__bad__{name}" for name in TOOLS}
        assert tools["mcp__bad__huge"](mb=0.5) == {"blob": "x" * 500_000}  # under the limits: as before
        before = peak_rss()
        for name, args, limit in (
            ("huge", {"mb": 64}, "FLEET_MCP_RESULT_MAX_BYTES"),
            ("deep", {"levels": 100}, "FLEET_MCP_RESULT_MAX_DEPTH"),
            ("many", {"count": 400_000}, "FLEET_MCP_RESULT_MAX_ITEMS"),
        ):
            with pytest.raises(McpToolError) as raised:
                tools[f"mcp__bad__{name}"](**args)
            assert raised.value.code == "mcp_result_too_large", raised.value
            assert str(raised.value).startswith(f"mcp__bad__{name} failed: mcp_result_too_large") and limit in str(
                raised.value
            )
            assert tools["mcp__bad__fine"]() == "fine"  # the connection is still usable
        assert peak_rss() - before < 32 * MB  # 64 MB answered, nowhere near it read
    finally:
        box.close()
    assert sink.events == []


def test_two_servers_of_one_name_offer_neither_and_say_so(settings: Settings) -> None:
    operator = McpServerSpec(name="gh", command=sys.executable, args=[HOSTILE], tools=["fine"])
    mine = McpServerSpec(name="gh", command=sys.executable, args=[HOSTILE], tools=["fine", "query"])
    other = McpServerSpec(name="gh_enterprise", command=sys.executable, args=[HOSTILE], tools=["fine"])
    box, sink = toolbox(settings, operator, other, users=(mine,))
    try:
        names = sorted(tool.name for tool in box.tools())
    finally:
        box.close()
    assert names == ["mcp__gh__query", "mcp__gh_enterprise__fine"]  # gh_enterprise is not shadowed by gh
    (warning,) = sink.events
    assert warning.code == "mcp_tool_name_collision" and "mcp__gh__fine" in warning.message


def test_the_meter_refuses_as_the_bytes_stream() -> None:
    limits = ResultLimits(max_bytes=1000, max_depth=4, max_items=50)
    reader = LineReader(limits)
    assert reader.feed(b'{"id":1,"result":[1,2]}\n{"jsonrpc":"2.0","id":7,"result":"') == [
        (b'{"id":1,"result":[1,2]}', b"")
    ]
    (refused,) = reader.feed(b"y" * 2000)  # refused at once, not when the line ends
    assert refused[0].code == "mcp_result_too_large" and b'"id":7' in refused[1]
    assert reader.feed(b"z" * 5000) == []  # the rest of the line is dropped as it comes
    assert reader.feed(b'"}\n{"ok":1}\n') == [(b'{"ok":1}', b"")]
    meter = ShapeMeter(limits)
    meter.feed(b'{"a":"[[[[[[[[ ,,,,,,,, \\" ]]]]"}')  # brackets and commas in strings are text
    assert meter.depth == 0 and meter.items == 1
    # an SSE field line cannot open a string that hides the data line's structure, nor lower its depth
    with pytest.raises(Exception, match="nests deeper than 4"):
        ShapeMeter(limits).feed(b'id: "]]]]\ndata: [[[[[[]]]]]]\n')
