"""Span shapes the live rlm test does not reach: tools mode (tool spans under the mode), a failed turn and a
failed model call (status ERROR), the router's chat span under fleet.route, span events."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from fleet_rlm.events import (
    ErrorEvent,
    EventBase,
    LMCall,
    RouteDecision,
    ToolCall,
    ToolResult,
    TurnFailed,
    TurnStarted,
    WarningEvent,
    utcnow,
)
from fleet_rlm.telemetry.trace import RunTrace, ns

pytestmark = pytest.mark.db_independent

ENV = {"run_id": "r1", "session_id": "s1"}


def timeline(*events: EventBase) -> list[EventBase]:
    """The events 10 ms apart, so spans get distinct times."""
    start = utcnow()
    return [e.model_copy(update={"ts": start + timedelta(milliseconds=10 * i)}) for i, e in enumerate(events)]


def fold(events: list[EventBase]) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace = RunTrace(provider.get_tracer("t"), capture=False, user_id=None, start_time=ns(events[0].ts), **ENV)
    for event in events[:-1]:
        trace.observe(event)
    trace.finish(events[-1])
    return list(exporter.get_finished_spans())


def lm(role: str, *, ok: bool = True, **extra: Any) -> LMCall:
    return LMCall(**ENV, call_id=f"{role}-call", role=role, model="anthropic/claude-x", ok=ok, latency_ms=5, **extra)


def test_tools_mode_failed_turn_and_router() -> None:
    finished = fold(
        timeline(
            TurnStarted(**ENV, requested_mode="auto"),
            lm("router", actor="router"),
            RouteDecision(**ENV, mode="tools", reason="needs a search"),
            lm("root"),
            ToolCall(**ENV, call_id="t1", name="search", args={"q": "x"}),
            WarningEvent(**ENV, code="slow_tool", message="search is slow"),
            ToolResult(**ENV, call_id="t1", name="search", ok=False, error="boom", latency_ms=7),
            lm("root", ok=False, error="RateLimitError: slow down"),
            ErrorEvent(**ENV, code="lm_rate_limited", message="the provider refused", fatal=True),
            TurnFailed(**ENV, code="lm_rate_limited", message="the provider refused"),
        )
    )
    spans = {s.name: s for s in finished}
    root, route, mode = spans["fleet.turn"], spans["fleet.route"], spans["fleet.mode.tools"]
    assert root.status.status_code is StatusCode.ERROR and root.attributes["error.type"] == "lm_rate_limited"
    assert root.attributes["fleet.status"] == "failed" and root.attributes["fleet.mode"] == "tools"
    chats = [s for s in finished if s.name == "chat claude-x"]
    assert len(chats) == 3
    router = next(s for s in chats if s.attributes["fleet.lm.role"] == "router")
    assert router.parent.span_id == route.context.span_id and router.attributes["gen_ai.system"] == "anthropic"
    tool = spans["execute_tool search"]
    assert tool.parent.span_id == mode.context.span_id and tool.status.status_code is StatusCode.ERROR
    assert tool.attributes["gen_ai.tool.name"] == "search" and "tool.parameters" not in tool.attributes
    assert [e.name for e in tool.events] == ["warning"] and tool.events[0].attributes["code"] == "slow_tool"
    assert route.end_time <= mode.start_time
    assert all(c.parent.span_id == mode.context.span_id for c in chats if c is not router)
    failed = [s for s in chats if s.status.status_code is StatusCode.ERROR]
    assert len(failed) == 1 and failed[0].attributes["error.type"] == "RateLimitError"
    assert [e.name for e in mode.events] == ["error"]
