"""Group a run's flat event log into steps, the unit a trace view shows (documented in docs/events.md terms).

Rules, applied to each event in seq order (the step takes the position of its first event):
- `reasoning`, `code`, `output`, `repl_variables`: one "iteration" step per (actor, payload.iteration): the
  model's reasoning, the code it wrote, what the REPL printed and the variables it held after that iteration.
- `tool_call`, `tool_result`: one "tool" step per payload.call_id (the call and its result).
- `sub_lm_start`, `sub_lm_end`: one "sub_lm" step per payload.call_id (an llm_query and its answer).
- `child_start`, `child_progress`, `child_end`: one "child" step per payload.child_id (the child's own
  reasoning/code/output events carry actor `child:<id>` and form their own iteration steps at depth >= 1).
- `lm_call`: joins the sub_lm step of its payload.sub_call_id (the llm_query it answered), else the iteration
  step of its payload.iteration (the model call that wrote that step); outside RLM steps it stands alone.
- anything else (lifecycle, status, route decision, warnings, usage, final...): a step of its own ("event").
An event missing its grouping key also stands alone, so malformed or future events are never dropped.
"""

from __future__ import annotations

from typing import Any

from fleet_rlm.schemas.runs import EventOut, StepKind, StepOut

ITERATION_TYPES = frozenset({"reasoning", "code", "output", "repl_variables"})
KEYED_TYPES: dict[str, tuple[StepKind, str]] = {
    "tool_call": ("tool", "call_id"),
    "tool_result": ("tool", "call_id"),
    "sub_lm_start": ("sub_lm", "call_id"),
    "sub_lm_end": ("sub_lm", "call_id"),
    "child_start": ("child", "child_id"),
    "child_progress": ("child", "child_id"),
    "child_end": ("child", "child_id"),
}


def _grouping(event: EventOut) -> tuple[StepKind, str | None, tuple[Any, ...] | None]:
    """(kind, key shown to clients, identity used to merge events) of one event."""
    payload = event.payload
    if event.type == "lm_call":
        sub_call = payload.get("sub_call_id")
        if isinstance(sub_call, str) and sub_call:
            return "sub_lm", sub_call, ("sub_lm", sub_call)
        if not payload.get("iteration"):
            return "event", None, None
    if event.type in ITERATION_TYPES or event.type == "lm_call":
        iteration = payload.get("iteration")
        if isinstance(iteration, int):
            return "iteration", str(iteration), ("iteration", event.actor, iteration)
    elif event.type in KEYED_TYPES:
        kind, field = KEYED_TYPES[event.type]
        value = payload.get(field)
        if isinstance(value, str) and value:
            return kind, value, (kind, value)
    return "event", None, None


def group_steps(events: list[EventOut]) -> list[StepOut]:
    """Steps in order of their first event; each holds its events in seq order."""
    steps: list[StepOut] = []
    open_steps: dict[tuple[Any, ...], StepOut] = {}
    for event in events:
        kind, key, identity = _grouping(event)
        step = open_steps.get(identity) if identity is not None else None
        if step is None:
            step = StepOut(
                index=len(steps),
                kind=kind,
                key=key,
                actor=event.actor,
                depth=event.depth,
                first_seq=event.seq,
                last_seq=event.seq,
                started_at=event.ts,
                ended_at=event.ts,
                types=[],
                events=[],
            )
            steps.append(step)
            if identity is not None:
                open_steps[identity] = step
        step.events.append(event)
        step.last_seq = event.seq
        step.ended_at = max(step.ended_at, event.ts)
        if event.type not in step.types:
            step.types.append(event.type)
    return steps
