"""`RunTrace`: one run's events folded into one OpenTelemetry trace, as they are recorded.

The runtime knows nothing about tracing: this subscriber sees the run's event stream (the same events the store
keeps) and opens and closes spans from it, with the events' own timestamps as span times:

    fleet.turn                              the run (opened when it starts, ended by its terminal event)
      fleet.context                         context loading (each source is a span event)
      fleet.route                           the routing decision (and the router's chat span)
      fleet.mode.<mode>                     the mode that ran
        fleet.rlm.iteration <n>             one RLM step of the root: the chat span that wrote it, then
          chat <model>                      ... the model call (GenAI attributes, tokens, latency)
          fleet.sandbox.cell                ... the REPL cell, and inside it what its code called:
            execute_tool <name>             host tools (rlm_query too),
            llm_query                       sub-LM calls (each wraps its own chat span),
            invoke_agent child:<id>         child RLMs, whose iterations nest the same way.

Children nest by actor: events of `child:<id>` belong under the span its child_start opened. Everything else
(warnings, status lines, artifacts, budget stops) becomes a span event on the innermost open span. Calls are
made on the server's event loop only; a failure here is logged once and never reaches the turn.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from fleet_rlm.events import (
    ChildEnd,
    ChildStart,
    Code,
    ContextLoaded,
    EventBase,
    Final,
    LMCall,
    Output,
    Reasoning,
    RouteDecision,
    SubLMEnd,
    SubLMStart,
    ToolCall,
    ToolResult,
    TurnStarted,
    Usage,
)
from fleet_rlm.telemetry import attributes as attrs

log = logging.getLogger(__name__)
SPAN_EVENT_TYPES = frozenset(
    {"status", "warning", "error", "budget_exhausted", "sandbox_reset", "artifact_created", "memory_updated"}
)
SPAN_EVENT_FIELDS = ("code", "message", "phase", "budget", "limit", "used", "reason", "name", "path", "size_bytes")


def ns(ts: datetime) -> int:
    return int(ts.timestamp() * 1_000_000) * 1000


@dataclass
class _Actor:
    """The open spans of one actor (the root, or one child RLM)."""

    container: Span
    rlm: bool
    iteration: Span | None = None
    iterations: int = 0
    cell: Span | None = None
    tools: list[Span] = field(default_factory=list)

    def innermost(self) -> Span:
        if self.tools:
            return self.tools[-1]
        return self.cell or self.iteration or self.container

    def close_step(self, at: int) -> None:
        for span in (self.cell, self.iteration):
            if span is not None:
                span.end(at)
        self.cell = self.iteration = None


class RunTrace:
    def __init__(
        self,
        tracer: trace.Tracer,
        *,
        run_id: str,
        session_id: str,
        user_id: str | None,
        capture: bool,
        start_time: int | None = None,
    ) -> None:
        self.tracer = tracer
        self.capture = capture
        self.root = tracer.start_span(
            "fleet.turn",
            kind=SpanKind.SERVER,
            start_time=start_time,
            attributes={
                attrs.KIND: "CHAIN",
                "fleet.run_id": run_id,
                "fleet.session_id": session_id,
                "session.id": session_id,
                **({"user.id": user_id} if user_id else {}),
            },
        )
        context = self.root.get_span_context()
        self.trace_id = trace.format_trace_id(context.trace_id)
        self.span_id = trace.format_span_id(context.span_id)
        self.sampled = context.trace_flags.sampled
        self._root = _Actor(self.root, rlm=False)
        self._children: dict[str, _Actor] = {}
        self._tools: dict[str, tuple[_Actor, Span]] = {}
        self._subs: dict[str, tuple[_Actor, Span]] = {}
        self._context: Span | None = None
        self._route: Span | None = None
        self._route_start: int | None = None
        self._usage: Usage | None = None
        self._final: Final | None = None
        self._failed = False
        self.finished = False

    # --- the subscriber ---------------------------------------------------------------------------------------
    def observe(self, event: EventBase) -> None:
        """Fold one recorded event into the trace (never raises)."""
        if self.finished or self._failed:
            return
        try:
            self._observe(event)
        except Exception:
            self._failed = True
            log.exception("tracing of run %s stopped at a %s event", event.run_id, event.type)

    def finish(self, terminal: EventBase) -> None:
        """Close every open span at the terminal event's time and end the turn span (never raises)."""
        if self.finished:
            return
        self.finished = True
        try:
            self._finish(terminal)
        except Exception:
            log.exception("tracing of run %s could not finish", terminal.run_id)
            self.root.end()

    # --- dispatch ---------------------------------------------------------------------------------------------
    def _actor(self, event: EventBase) -> _Actor:
        if event.actor.startswith("child:"):
            return self._children.get(event.actor[len("child:") :], self._root)
        return self._root

    def _child_span(self, name: str, parent: Span, start: int, attributes: dict[str, Any], **kw: Any) -> Span:
        context = trace.set_span_in_context(parent)
        return self.tracer.start_span(name, context=context, start_time=start, attributes=attributes, **kw)

    def _observe(self, event: EventBase) -> None:
        at = ns(event.ts)
        if isinstance(event, TurnStarted):
            started: dict[str, Any] = {"fleet.requested_mode": event.requested_mode}
            if event.turn_id:
                started["fleet.turn_id"] = event.turn_id
            self.root.set_attributes(started | attrs.content(self.capture, **{attrs.INPUT: event.input_preview}))
            self._route_start = at
        elif isinstance(event, ContextLoaded):
            self._on_context(event, at)
        elif isinstance(event, RouteDecision):
            self._on_route(event, at)
        elif isinstance(event, LMCall):
            self._on_lm_call(event, at)
        elif isinstance(event, Reasoning):
            actor = self._actor(event)
            if actor.iteration is not None and self.capture:
                actor.iteration.set_attribute("fleet.reasoning", event.text)
        elif isinstance(event, Code):
            self._on_code(event, at)
        elif isinstance(event, Output):
            self._on_output(event, at)
        elif isinstance(event, ToolCall | SubLMStart):
            self._on_call_start(event, at)
        elif isinstance(event, ToolResult | SubLMEnd):
            self._on_call_end(event, at)
        elif isinstance(event, ChildStart):
            self._on_child_start(event, at)
        elif isinstance(event, ChildEnd):
            self._on_child_end(event, at)
        elif isinstance(event, Usage):
            self._usage = event
        elif isinstance(event, Final):
            self._final = event
        elif event.type in SPAN_EVENT_TYPES:
            fields = {k: getattr(event, k) for k in SPAN_EVENT_FIELDS if getattr(event, k, None) is not None}
            self._actor(event).innermost().add_event(event.type, {k: _scalar(v) for k, v in fields.items()}, at)

    # --- context and route ------------------------------------------------------------------------------------
    def _on_context(self, event: ContextLoaded, at: int) -> None:
        if self._context is None:
            start = self._route_start or at
            self._context = self._child_span("fleet.context", self.root, start, {attrs.KIND: "RETRIEVER"})
        self._context.add_event(
            "context_loaded",
            {"source": event.source, "name": event.name, "chars": event.chars, "truncated": event.truncated},
            at,
        )
        self._route_start = at

    def _open_route(self, at: int) -> Span:
        if self._context is not None:
            self._context.end(self._route_start or at)
            self._context = None
        if self._route is None:
            start = min(self._route_start or at, at)
            self._route = self._child_span("fleet.route", self.root, start, {attrs.KIND: "CHAIN"})
        return self._route

    def _on_route(self, event: RouteDecision, at: int) -> None:
        route = self._open_route(at)
        route.set_attributes(
            {
                "fleet.route.mode": event.mode,
                "fleet.route.reason": event.reason[:1000],
                "fleet.route.requested_mode": event.requested_mode,
                "fleet.context_chars": event.context_chars,
            }
        )
        route.end(at)
        self._route = None
        self.root.set_attribute("fleet.mode", event.mode)
        mode = self._child_span(f"fleet.mode.{event.mode}", self.root, at, {attrs.KIND: "CHAIN"})
        self._root = _Actor(mode, rlm=event.mode == "rlm")

    # --- model calls, cells, tools, children ------------------------------------------------------------------
    def _on_lm_call(self, event: LMCall, at: int) -> None:
        start = at - event.latency_ms * 1_000_000
        name, attributes = attrs.lm_call(event, self.capture)
        if event.role == "router":
            parent = self._open_route(at)
        elif event.sub_call_id is not None and event.sub_call_id in self._subs:
            parent = self._subs[event.sub_call_id][1]
        else:
            actor = self._actor(event)
            if actor.rlm and not actor.tools:
                self._next_iteration(actor, start, event.iteration)
            parent = actor.innermost()
        span = self._child_span(name, parent, start, attributes, kind=SpanKind.CLIENT)
        if not event.ok:
            span.set_status(Status(StatusCode.ERROR, (event.error or "")[:200]))
        span.end(at)

    def _next_iteration(self, actor: _Actor, start: int, number: int) -> None:
        actor.close_step(start)
        actor.iterations = number or actor.iterations + 1
        actor.iteration = self._child_span(
            f"fleet.rlm.iteration {actor.iterations}",
            actor.container,
            start,
            {attrs.KIND: "CHAIN", "fleet.iteration": actor.iterations},
        )

    def _on_code(self, event: Code, at: int) -> None:
        actor = self._actor(event)
        if actor.cell is not None:
            actor.cell.end(at)
        elif actor.rlm and actor.iteration is None:
            self._next_iteration(actor, at, event.iteration)
        parent = actor.iteration or actor.innermost()
        attributes = {attrs.KIND: "CHAIN", "fleet.iteration": event.iteration, "fleet.cell.code_chars": len(event.code)}
        attributes |= attrs.content(self.capture, **{attrs.INPUT: event.code})
        actor.cell = self._child_span("fleet.sandbox.cell", parent, at, attributes)

    def _on_output(self, event: Output, at: int) -> None:
        actor = self._actor(event)
        if actor.cell is None:
            return
        cell = actor.cell
        sizes = {f"fleet.cell.{event.stream}_chars": len(event.text), "fleet.cell.omitted_chars": event.omitted_chars}
        cell.set_attributes(sizes)
        cell.set_attributes(attrs.content(self.capture, **{attrs.OUTPUT: event.text}))
        if event.stream == "stderr":
            cell.set_status(Status(StatusCode.ERROR, "the cell raised"))
        cell.end(at)
        actor.cell = None

    def _on_call_start(self, event: ToolCall | SubLMStart, at: int) -> None:
        actor = self._actor(event)
        if isinstance(event, ToolCall):
            name, attributes = attrs.tool_call(event, self.capture)
        else:
            name, attributes = attrs.sub_lm(event, self.capture)
        span = self._child_span(name, actor.innermost(), at, attributes)
        if isinstance(event, ToolCall):
            self._tools[event.call_id] = (actor, span)
            actor.tools.append(span)
        else:
            self._subs[event.call_id] = (actor, span)

    def _on_call_end(self, event: ToolResult | SubLMEnd, at: int) -> None:
        table = self._tools if isinstance(event, ToolResult) else self._subs
        entry = table.pop(event.call_id, None)
        if entry is None:
            return
        actor, span = entry
        if span in actor.tools:
            actor.tools.remove(span)
        result = event.result_preview if isinstance(event, ToolResult) else event.response_preview
        span.set_attributes(attrs.content(self.capture, **{attrs.OUTPUT: result}))
        if event.latency_ms is not None:
            span.set_attribute("fleet.latency_ms", event.latency_ms)
        if not event.ok:
            span.set_attributes({"error.type": "tool_error"})
            span.set_status(Status(StatusCode.ERROR, (event.error or "")[:200]))
        span.end(at)

    def _on_child_start(self, event: ChildStart, at: int) -> None:
        name, attributes = attrs.child(event, self.capture)
        span = self._child_span(name, self._actor(event).innermost(), at, attributes)
        self._children[event.child_id] = _Actor(span, rlm=True)

    def _on_child_end(self, event: ChildEnd, at: int) -> None:
        actor = self._children.pop(event.child_id, None)
        if actor is None:
            return
        self._close_actor(actor, at)
        actor.container.set_attributes(attrs.content(self.capture, **{attrs.OUTPUT: event.answer_preview}))
        if not event.ok:
            actor.container.set_status(Status(StatusCode.ERROR, (event.error or "")[:200]))
        actor.container.end(at)

    def _close_actor(self, actor: _Actor, at: int) -> None:
        for span in reversed(actor.tools):
            span.end(at)
        actor.tools.clear()
        actor.close_step(at)

    # --- the end ----------------------------------------------------------------------------------------------
    def _finish(self, terminal: EventBase) -> None:
        at = ns(terminal.ts)
        for _actor, span in [*self._subs.values(), *self._tools.values()]:
            if span.is_recording():
                span.end(at)
        for child in reversed(list(self._children.values())):
            self._close_actor(child, at)
            child.container.end(at)
        for phase in (self._context, self._route):
            if phase is not None:
                phase.end(at)
        self._close_actor(self._root, at)
        if self._root.container is not self.root:
            self._root.container.end(at)
        self._summarize(terminal)
        self.root.end(at)

    def _summarize(self, terminal: EventBase) -> None:
        status = {"turn_finished": "succeeded", "turn_failed": "failed", "turn_cancelled": "cancelled"}
        self.root.set_attribute("fleet.status", status.get(terminal.type, "interrupted"))
        duration = getattr(terminal, "duration_ms", None)
        if duration:
            self.root.set_attribute("fleet.duration_ms", duration)
        if self._usage is not None:
            u = self._usage
            self.root.set_attributes(
                {
                    "fleet.usage.tokens_in": u.tokens_in,
                    "fleet.usage.tokens_out": u.tokens_out,
                    "fleet.usage.cost_usd": u.cost_usd,
                    "fleet.usage.lm_calls": u.lm_calls,
                    "fleet.usage.iterations": u.iterations,
                }
            )
        if self._final is not None:
            self.root.set_attributes(attrs.content(self.capture, **{attrs.OUTPUT: self._final.answer}))
        if terminal.type == "turn_failed":
            code = str(getattr(terminal, "code", "error"))
            self.root.set_attribute("error.type", code)
            self.root.set_status(Status(StatusCode.ERROR, str(getattr(terminal, "message", ""))[:200]))
        elif terminal.type == "turn_interrupted":
            self.root.set_status(Status(StatusCode.ERROR, str(getattr(terminal, "reason", ""))[:200]))


def _scalar(value: Any) -> Any:
    return value if isinstance(value, str | bool | int | float) else str(value)
