"""The shared export draws the workbench's tree: the Python arrangement of `group_steps` and the web UI's
`buildTree` (src/frontend/src/lib/events/tree.ts) give the same outline of a recorded depth-2 fan-out run, both
checked against one golden file (the Vitest side is src/frontend/src/lib/events/outline.test.ts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fleet_rlm.schemas.runs import EventOut
from fleet_rlm.services.share_nodes import Node, arrange
from fleet_rlm.services.steps import group_steps

FIXTURES = Path(__file__).resolve().parents[2] / "src" / "frontend" / "src" / "test" / "fixtures"
ENVELOPE = {"id", "type", "run_id", "session_id", "seq", "ts", "depth", "actor", "parent_id", "turn_id"}


def recorded_events() -> list[EventOut]:
    flat = json.loads((FIXTURES / "fanout-run.json").read_text(encoding="utf-8"))
    return [
        EventOut(
            run_id=e["run_id"],
            seq=e["seq"],
            type=e["type"],
            ts=e["ts"],
            depth=e["depth"],
            actor=e["actor"],
            parent_id=e["parent_id"],
            payload={k: v for k, v in e.items() if k not in ENVELOPE},
        )
        for e in flat
    ]


def outline(nodes: list[Node]) -> list[Any]:
    return [[n.kind, n.title, outline(n.children)] for n in nodes]


def test_share_tree_has_the_workbench_outline() -> None:
    golden = json.loads((FIXTURES / "fanout-outline.json").read_text(encoding="utf-8"))
    assert outline(arrange(group_steps(recorded_events()))) == golden


def test_cells_carry_code_output_and_variables() -> None:
    events = recorded_events()
    code = next(e for e in events if e.type == "code" and e.actor == "root")
    variables = {"variables": [{"name": "total", "type": "int", "preview": "42"}], "omitted": 2, "iteration": 1}
    events.append(code.model_copy(update={"seq": 82, "type": "repl_variables", "payload": variables}))
    first = arrange(group_steps(events))[1]
    cells = [n for n in first.children if n.kind == "code"]
    assert [s.label for s in first.sections] == ["reasoning"] and first.subtitle
    sections = {s.label: s for s in cells[0].sections}
    assert sections["code"].style == "code" and sections["stdout"].style == "output"
    assert sections["variables"].text == "total: int = 42\n… 2 more"


def test_run_counts_read_as_words() -> None:
    """The export's run line says "1 child" and "1 iteration", not "1 children" (seen in the walk-through)."""
    from fleet_rlm.services.share_tree import RunView

    def counts(iterations: int, sub_lm_calls: int, children: int) -> list[str]:
        stats = {"iterations": iterations, "sub_lm_calls": sub_lm_calls, "children": children, "events": 0}
        return RunView(run=None, start=None, end=None, nodes=[], truncated=False, stats=stats).counts()  # type: ignore[arg-type]

    assert counts(1, 1, 1) == ["1 iteration", "1 sub-LM call", "1 child"]
    assert counts(6, 4, 0) == ["6 iterations", "4 sub-LM calls", "0 children"]
