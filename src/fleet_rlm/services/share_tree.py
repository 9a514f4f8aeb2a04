"""The trace tree a shared export shows, built once from the export bundle for both the HTML and Markdown forms.

Steps come from the one event-to-step grouping (`group_steps`); this module only arranges them: each actor's
steps in order, the sub-LM calls of one `llm_query_batched` under a batch node, and a child RLM's own steps
nested under its `child` step, recursively (actor `child:<id>`). Steps whose actor no step spawned stay at the
top level, so nothing is dropped. Times are kept so renderers can lay every node on the run's shared axis.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fleet_rlm.schemas.runs import EventOut, RunOut, StepOut
from fleet_rlm.schemas.sessions import SessionExport
from fleet_rlm.services.steps import group_steps

MAX_RUN_EVENTS = 5000  # as the steps view: one run's tree covers its first 5000 events
MAX_TEXT_CHARS = 20_000  # per section of a node (reasoning, code, output...)
EVENT_LINE_CHARS = 500


@dataclass
class Section:
    label: str
    text: str
    style: str = "text"  # text | code | output | error


@dataclass
class Node:
    kind: str  # iteration | tool | sub_lm | batch | child | event
    title: str
    actor: str
    depth: int
    start: datetime
    end: datetime
    duration_ms: int
    ok: bool | None = None
    sections: list[Section] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)


@dataclass
class RunView:
    run: RunOut
    start: datetime
    end: datetime
    nodes: list[Node]
    truncated: bool
    stats: dict[str, int]

    @property
    def total_ms(self) -> int:
        return _ms(self.start, self.end)


@dataclass
class TurnView:
    number: int
    message: str
    answer: str | None
    runs: list[RunView]


@dataclass
class ArtifactView:
    name: str
    media_type: str | None
    size: int
    text: str | None = None
    data_uri: str | None = None
    note: str = ""


@dataclass
class SessionView:
    bundle: SessionExport
    turns: list[TurnView]
    other_runs: list[RunView]  # runs not attached to a turn (a fork's `session_forked` record)
    artifacts: list[ArtifactView]
    redaction: list[str]


def build_view(bundle: SessionExport, *, artifacts: list[ArtifactView], redaction: list[str]) -> SessionView:
    by_run: dict[str, list[EventOut]] = {}
    for event in bundle.events:
        by_run.setdefault(event.run_id, []).append(event)
    views = {run.id: run_view(run, by_run.get(run.id, [])) for run in bundle.runs}
    turns: list[TurnView] = []
    attached: set[str] = set()
    for turn in bundle.turns:
        runs = [views[turn.run_id]] if turn.run_id in views else []
        attached.update(r.run.id for r in runs)
        turns.append(TurnView(number=turn.index + 1, message=turn.user_message, answer=turn.answer, runs=runs))
    other = [view for run_id, view in views.items() if run_id not in attached]
    return SessionView(bundle=bundle, turns=turns, other_runs=other, artifacts=artifacts, redaction=redaction)


def run_view(run: RunOut, events: list[EventOut]) -> RunView:
    events = sorted(events, key=lambda e: e.seq)
    shown = events[:MAX_RUN_EVENTS]
    steps = group_steps(shown)
    by_actor: dict[str, list[StepOut]] = {}
    for step in steps:
        by_actor.setdefault(step.actor or "root", []).append(step)
    used: set[str] = set()
    nodes = _nodes("root", by_actor, used)
    for actor in list(by_actor):
        if actor not in used:  # router, runner, tools, or a child whose child_start is missing
            nodes.extend(_nodes(actor, by_actor, used))
    nodes.sort(key=lambda n: n.start)
    times = [s.started_at for s in steps] + [s.ended_at for s in steps]
    times += [t for t in (run.started_at, run.finished_at) if t is not None]
    start, end = (min(times), max(times)) if times else (run.created_at, run.created_at)
    stats = {
        "iterations": sum(1 for s in steps if s.kind == "iteration"),
        "sub_lm_calls": sum(1 for s in steps if s.kind == "sub_lm"),
        "children": sum(1 for s in steps if s.kind == "child"),
        "events": len(events),
    }
    return RunView(run=run, start=start, end=end, nodes=nodes, truncated=len(events) > len(shown), stats=stats)


def _nodes(actor: str, by_actor: dict[str, list[StepOut]], used: set[str]) -> list[Node]:
    if actor in used:
        return []
    used.add(actor)
    nodes: list[Node] = []
    batches: dict[str, Node] = {}
    for step in by_actor.get(actor, []):
        node = _node(step)
        if step.kind == "child" and step.key:
            node.children = _nodes(f"child:{step.key}", by_actor, used)
        batch_id = _first(step, "sub_lm_start").get("batch_id") if step.kind == "sub_lm" else None
        if isinstance(batch_id, str) and batch_id:
            group = batches.get(batch_id)
            if group is None:
                size = _first(step, "sub_lm_start").get("batch_size")
                group = Node("batch", f"llm_query_batched ({size} prompts)", actor, step.depth, node.start, node.end, 0)
                batches[batch_id] = group
                nodes.append(group)
            group.children.append(node)
            group.end = max(group.end, node.end)
            group.duration_ms = _ms(group.start, group.end)
            continue
        nodes.append(node)
    return nodes


def _node(step: StepOut) -> Node:
    node = Node(
        kind=step.kind,
        title=step.kind,
        actor=step.actor or "root",
        depth=step.depth,
        start=step.started_at,
        end=step.ended_at,
        duration_ms=_ms(step.started_at, step.ended_at),
    )
    if step.kind == "iteration":
        node.title = f"iteration {step.key}"
        for event in step.events:
            p = event.payload
            if event.type == "reasoning":
                node.sections.append(Section("reasoning", _clip(p.get("text"))))
            elif event.type == "code":
                node.sections.append(Section("code", _clip(p.get("code")), "code"))
            elif event.type == "output":
                omitted = p.get("omitted_chars") or 0
                note = f" ({omitted} chars omitted)" if omitted else ""
                style = "error" if p.get("stream") == "stderr" else "output"
                node.sections.append(Section(f"{p.get('stream', 'stdout')}{note}", _clip(p.get("text")), style))
    elif step.kind == "sub_lm":
        start, end = _first(step, "sub_lm_start"), _first(step, "sub_lm_end")
        node.title = f"llm_query {start.get('role', 'sub')} · {start.get('model', '?')}"
        node.duration_ms = int(end.get("latency_ms") or node.duration_ms)
        node.ok = end.get("ok") if end else None
        node.sections += [Section("prompt", _clip(start.get("prompt_preview"))), _answer(end, "response_preview")]
    elif step.kind == "child":
        start, end = _first(step, "child_start"), _first(step, "child_end")
        node.title = f"child RLM {step.key} (depth {start.get('child_depth', step.depth + 1)})"
        node.ok = end.get("ok") if end else None
        node.sections += [Section("task", _clip(start.get("task_preview"))), _answer(end, "answer_preview")]
    elif step.kind == "tool":
        call, result = _first(step, "tool_call"), _first(step, "tool_result")
        node.title = f"tool {call.get('name') or result.get('name') or '?'}"
        node.ok = result.get("ok") if result else None
        if result.get("latency_ms") is not None:
            node.duration_ms = int(result["latency_ms"])
        node.sections += [
            Section("args", _clip(_json(call.get("args", {}))), "code"),
            _answer(result, "result_preview"),
        ]
    else:
        (event,) = step.events
        node.title = event.type
        line = _event_line(event)
        if line:
            node.sections.append(Section("", line))
    node.sections = [s for s in node.sections if s.text or s.style == "error"]
    return node


def _answer(payload: dict[str, Any], field_name: str) -> Section:
    if payload.get("ok") is False:
        return Section("error", _clip(payload.get("error") or "failed"), "error")
    return Section("answer", _clip(payload.get(field_name)))


def _event_line(event: EventOut) -> str:
    p = event.payload
    picks = {
        "status": ("message",),
        "route_decision": ("mode", "reason"),
        "context_loaded": ("source", "name", "chars"),
        "warning": ("code", "message"),
        "error": ("code", "message", "action"),
        "turn_failed": ("code", "message", "action"),
        "turn_cancelled": ("reason",),
        "turn_interrupted": ("reason",),
        "budget_exhausted": ("budget", "limit", "used"),
        "final": ("answer",),
        "summary": ("text",),
        "usage": ("tokens_in", "tokens_out", "lm_calls", "cost_usd"),
        "artifact_created": ("name", "size"),
        "turn_started": ("requested_mode", "input_preview"),
        "turn_finished": ("mode", "duration_ms"),
        "session_forked": ("origin_session_id", "after_turn", "shared", "not_shared"),
    }.get(event.type)
    keys = picks or tuple(k for k in p if k not in ("id", "session_id"))
    parts = [f"{k}: {_scalar(p[k])}" for k in keys if k in p and p[k] not in (None, "", [], {})]
    return _clip(" · ".join(parts), EVENT_LINE_CHARS)


def _first(step: StepOut, type_: str) -> dict[str, Any]:
    return next((e.payload for e in step.events if e.type == type_), {})


def _scalar(value: Any) -> str:
    if isinstance(value, list):
        return "; ".join(str(v) for v in value)
    return value if isinstance(value, str) else _json(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _clip(text: Any, limit: int = MAX_TEXT_CHARS) -> str:
    if text is None:
        return ""
    text = text if isinstance(text, str) else str(text)
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} more chars]"


def _ms(start: datetime, end: datetime) -> int:
    return max(0, int((end - start).total_seconds() * 1000))
