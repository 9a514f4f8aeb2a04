"""Arrange a run's steps (from the one event-to-step grouping, `group_steps`) into the workbench's trace tree.

The web UI's run tree (src/frontend/src/lib/events/tree.ts) and this module draw the same tree, node for node:
each agent's iterations; in an iteration the LM calls that generated it, then its REPL cells (code, output and
the variables report); a tool call, sub-LM call, `llm_query_batched` batch or child RLM nested in the innermost
open container of the agent that made it (an open tool call, else the current cell, else the iteration, else the
agent); a child's own iterations under its `child` node; notable events (route, context, warnings, budgets...) as
leaves. Lifecycle events (turn started/finished, status, usage, final, summary) are the run itself, not nodes.
tests/services/test_share_tree_parity.py checks both against one outline of a recorded run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from fleet_rlm.schemas.runs import EventOut, StepOut

MAX_TEXT_CHARS = 20_000  # per section of a node (reasoning, code, output...)
MAX_VARIABLES = 50


@dataclass
class Section:
    label: str
    text: str
    style: str = "text"  # text | code | output | error


@dataclass
class Node:
    kind: str  # iteration | lm | code | output | tool | sub_lm | batch | child | event (as the web UI's NodeKind)
    title: str
    actor: str
    seq: int
    start: datetime
    end: datetime
    subtitle: str = ""
    ok: bool | None = None
    sections: list[Section] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)
    order: float = 0.0  # sort key among siblings: seq, or the batch index inside a batch

    @property
    def duration_ms(self) -> int:
        return _ms(self.start, self.end)


@dataclass
class _Agent:
    kids: list[Node]
    iteration: Node | None = None
    cells: list[Node] = field(default_factory=list)
    tools: list[tuple[Node, StepOut]] = field(default_factory=list)

    def container(self, seq: int) -> list[Node]:
        """Where a step starting at `seq` goes: the innermost open tool call, cell, iteration, or the agent."""
        open_tools = [node for node, step in self.tools if _tool_open(step, seq)]
        if open_tools:
            return open_tools[-1].children
        cell = next((c for c in reversed(self.cells) if c.seq < seq), None)
        if cell is not None:
            return cell.children
        return self.iteration.children if self.iteration is not None else self.kids


def arrange(steps: list[StepOut]) -> list[Node]:
    """The top-level nodes of one run (the run node itself is the caller's)."""
    top: list[Node] = []
    agents: dict[str, _Agent] = {"root": _Agent(top)}
    batches: dict[str, Node] = {}
    for step in steps:
        actor = step.actor or "root"
        agent = agents.get(actor.removeprefix("child:")) if actor.startswith("child:") else None
        agent = agent or agents["root"]
        if step.kind == "iteration":
            _iteration(step, agent)
        elif step.kind == "child":
            node = _child(step)
            agent.container(step.first_seq).append(node)
            if step.key:
                agents[step.key] = _Agent(node.children)
        elif step.kind == "tool":
            node = _tool(step)
            agent.container(step.first_seq).append(node)
            agent.tools.append((node, step))
        elif step.kind == "sub_lm":
            _sub_lm(step, agent, batches)
        else:
            _loose(step.events[0], agent)
    _sort(top)
    return top


def _iteration(step: StepOut, agent: _Agent) -> None:
    number = int(step.key or 0)
    driving = [e for e in step.events if e.type in ("reasoning", "code", "output", "repl_variables")]
    if number <= 0 or not driving:  # outside RLM steps, or only LM calls: no iteration of its own
        for event in step.events:
            _loose(event, agent)
        return
    calls = [e for e in step.events if e.type == "lm_call"]
    start = min([step.started_at, *(_lm_start(e) for e in calls)])
    node = Node("iteration", f"Iteration {number}", step.actor or "root", step.first_seq, start, step.ended_at)
    agent.kids.append(node)
    agent.iteration, agent.cells, agent.tools = node, [], []
    for event in step.events:
        if event.type == "reasoning":
            node.subtitle = node.subtitle or _first_line(event.payload.get("text"))
            node.sections.append(Section("reasoning", _clip(event.payload.get("text"))))
        else:
            _loose(event, agent)


def _loose(event: EventOut, agent: _Agent) -> None:
    """One event that is not a keyed step of its own: an LM call, a cell or its output, or a notable event."""
    p, ts, actor = event.payload, event.ts, event.actor or "root"
    where = agent.iteration.children if agent.iteration is not None else agent.kids
    if event.type == "lm_call":
        where.append(_lm(event))
    elif event.type == "code":
        cell = Node("code", "REPL cell", actor, event.seq, ts, ts, subtitle=_first_line(p.get("code")))
        cell.sections.append(Section("code", _clip(p.get("code")), "code"))
        agent.cells.append(cell)
        where.append(cell)
    elif event.type == "output":
        stream = str(p.get("stream") or "stdout")
        omitted = p.get("omitted_chars") or 0
        label = f"{stream} ({omitted} chars omitted)" if omitted else stream
        section = Section(label, _clip(p.get("text")), "error" if stream == "stderr" else "output")
        if not agent.cells:
            node = Node("output", stream, actor, event.seq, ts, ts, subtitle=_first_line(p.get("text")))
            node.sections.append(section)
            agent.container(event.seq).append(node)
            return
        cell = agent.cells[-1]
        cell.sections.append(section)
        cell.end = max(cell.end, ts)
        if not cell.subtitle.startswith("→"):
            cell.subtitle = f"→ {_first_line(p.get('text'), 100)}"
        if stream == "stderr" and ("Traceback" in str(p.get("text")) or "Error" in str(p.get("text"))):
            cell.ok = False
    elif event.type == "repl_variables":
        if agent.cells:
            agent.cells[-1].sections.append(Section("variables", _variables(p), "output"))
    elif event.type in NOTABLE:
        title, subtitle, ok = NOTABLE[event.type](p)
        agent.container(event.seq).append(Node("event", title, actor, event.seq, ts, ts, subtitle, ok))
    if agent.cells and event.type not in ("usage", "status", "lm_call"):
        agent.cells[-1].end = max(agent.cells[-1].end, ts)


def _lm(event: EventOut) -> Node:
    p = event.payload
    cached = " · cached" if p.get("cached") else ""
    node = Node("lm", f"LM · {p.get('role', '?')}", event.actor or "root", event.seq, _lm_start(event), event.ts)
    node.subtitle = f"{p.get('model', '?')}{cached}"
    node.ok = bool(p.get("ok", True))
    node.sections.append(Section("", f"{p.get('tokens_in', 0)} tokens in · {p.get('tokens_out', 0)} out"))
    return node


def _tool(step: StepOut) -> Node:
    call, result = _first(step, "tool_call"), _first(step, "tool_result")
    name = str(call.get("name") or result.get("name") or "tool")
    node = Node("tool", name, step.actor or "root", step.first_seq, step.started_at, step.ended_at)
    node.subtitle = _first_line(_json(call.get("args", {})))
    if result.get("latency_ms") is not None:
        node.start = min(node.start, step.ended_at - timedelta(milliseconds=int(result["latency_ms"])))
    node.ok = result.get("ok") if result else None
    node.sections += [Section("args", _clip(_json(call.get("args", {}))), "code"), _answer(result, "result_preview")]
    return node


def _sub_lm(step: StepOut, agent: _Agent, batches: dict[str, Node]) -> None:
    start, end = _first(step, "sub_lm_start"), _first(step, "sub_lm_end")
    batch_id = start.get("batch_id")
    index = int(start.get("batch_index") or 0)
    title = f"Sub-LM #{index + 1}" if batch_id else f"Sub-LM ({start.get('role', 'sub')})"
    node = Node("sub_lm", title, step.actor or "root", step.first_seq, step.started_at, step.ended_at)
    node.subtitle = _first_line(start.get("prompt_preview"))
    node.ok = end.get("ok") if end else None
    node.sections += [Section("prompt", _clip(start.get("prompt_preview"))), _answer(end, "response_preview")]
    if not isinstance(batch_id, str) or not batch_id:
        agent.container(step.first_seq).append(node)
        return
    batch = batches.get(batch_id)
    if batch is None:
        size = start.get("batch_size") or 1
        batch = Node("batch", "llm_query_batched", node.actor, step.first_seq, node.start, node.end, f"{size} prompts")
        batches[batch_id] = batch
        agent.container(step.first_seq).append(batch)
    node.order = index
    batch.children.append(node)
    batch.end = max(batch.end, node.end)
    batch.ok = False if node.ok is False else batch.ok


def _child(step: StepOut) -> Node:
    start, end = _first(step, "child_start"), _first(step, "child_end")
    depth = start.get("child_depth", step.depth + 1)
    title = f"Child RLM · depth {depth}"
    node = Node("child", title, step.actor or "root", step.first_seq, step.started_at, step.ended_at)
    node.subtitle = _first_line(start.get("task_preview"))
    node.ok = end.get("ok") if end else None
    node.sections += [Section("task", _clip(start.get("task_preview"))), _answer(end, "answer_preview")]
    return node


def _opt(p: dict[str, Any], key: str) -> str:
    value = p.get(key)
    return "" if value is None else str(value)


NOTABLE: dict[str, Any] = {
    "reasoning": lambda p: ("Reasoning", _first_line(p.get("text")), None),
    "route_decision": lambda p: (f"Route: {_opt(p, 'mode')}", _opt(p, "reason"), None),
    "context_loaded": lambda p: (f"Context: {_opt(p, 'name')}", f"{p.get('chars', 0):,} chars", None),
    "warning": lambda p: ("Warning", _opt(p, "message"), None),
    "error": lambda p: ("Error", _opt(p, "message"), False),
    "budget_exhausted": lambda p: (f"Budget: {_opt(p, 'budget')}", f"{_opt(p, 'used')} of {_opt(p, 'limit')}", None),
    "sandbox_reset": lambda p: ("Sandbox reset", _opt(p, "reason"), None),
    "memory_updated": lambda p: ("Memory", _opt(p, "path"), None),
    "artifact_created": lambda p: (f"Artifact: {_opt(p, 'name')}", f"{_opt(p, 'size_bytes')} bytes", None),
}


def _variables(p: dict[str, Any]) -> str:
    rows = p.get("variables") or []
    lines = []
    for var in rows[:MAX_VARIABLES]:
        if isinstance(var, dict):
            lines.append(f"{var.get('name', '?')}: {var.get('type', '?')} = {var.get('preview', '')}")
    more = max(0, len(rows) - MAX_VARIABLES) + int(p.get("omitted") or 0)
    if more > 0:
        lines.append(f"… {more} more")
    return _clip("\n".join(lines)) or "(no variables)"


def _sort(nodes: list[Node], in_batch: bool = False) -> None:
    """Siblings in the order they began (their first event's seq); a batch's calls by their index."""
    for node in nodes:
        if not in_batch:
            node.order = node.seq
        _sort(node.children, node.kind == "batch")
    nodes.sort(key=lambda n: n.order)


def _tool_open(step: StepOut, seq: int) -> bool:
    if step.first_seq >= seq:
        return False
    return "tool_result" not in step.types or step.last_seq > seq


def _answer(payload: dict[str, Any], field_name: str) -> Section:
    if payload.get("ok") is False:
        return Section("error", _clip(payload.get("error") or "failed"), "error")
    return Section("answer", _clip(payload.get(field_name)))


def _lm_start(event: EventOut) -> datetime:
    return event.ts - timedelta(milliseconds=int(event.payload.get("latency_ms") or 0))


def _first(step: StepOut, type_: str) -> dict[str, Any]:
    return next((e.payload for e in step.events if e.type == type_), {})


def _first_line(text: Any, limit: int = 120) -> str:
    line = (str(text or "")).strip().split("\n")[0]
    return f"{line[:limit]}…" if len(line) > limit else line


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _clip(text: Any, limit: int = MAX_TEXT_CHARS) -> str:
    if text is None:
        return ""
    text = text if isinstance(text, str) else str(text)
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} more chars]"


def _ms(start: datetime, end: datetime) -> int:
    return max(0, int((end - start).total_seconds() * 1000))
