"""The trace tree a shared export shows, built once from the export bundle for both the HTML and Markdown forms.

Steps come from the one event-to-step grouping (`group_steps`) and are arranged by `share_nodes` into the same
tree the workbench draws (iterations, cells with code, output and variables, sub-LM calls, batches, children).
Times are kept so renderers can lay every node on the run's shared axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from fleet_rlm.schemas.runs import EventOut, RunOut
from fleet_rlm.schemas.sessions import SessionExport
from fleet_rlm.services.share_nodes import Node, Section, arrange
from fleet_rlm.services.steps import group_steps

__all__ = ["ArtifactView", "Node", "RunView", "Section", "SessionView", "TurnView", "build_view", "run_view"]

MAX_RUN_EVENTS = 5000  # as the steps view: one run's tree covers its first 5000 events


@dataclass
class RunView:
    run: RunOut
    start: datetime
    end: datetime
    nodes: list[Node]
    truncated: bool
    stats: dict[str, int]

    def counts(self) -> list[str]:
        """What the run did, in words: "4 iterations", "3 sub-LM calls", "1 child"."""
        stats = self.stats
        return [
            _counted(stats["iterations"], "iteration", "iterations"),
            _counted(stats["sub_lm_calls"], "sub-LM call", "sub-LM calls"),
            _counted(stats["children"], "child", "children"),
        ]

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
    nodes = arrange(steps)
    times = [s.started_at for s in steps] + [s.ended_at for s in steps] + _starts(nodes)
    times += [t for t in (run.started_at, run.finished_at) if t is not None]
    start, end = (min(times), max(times)) if times else (run.created_at, run.created_at)
    stats = {
        "iterations": sum(1 for s in steps if s.kind == "iteration"),
        "sub_lm_calls": sum(1 for s in steps if s.kind == "sub_lm"),
        "children": sum(1 for s in steps if s.kind == "child"),
        "events": len(events),
    }
    return RunView(run=run, start=start, end=end, nodes=nodes, truncated=len(events) > len(shown), stats=stats)


def _starts(nodes: list[Node]) -> list[datetime]:
    return [t for n in nodes for t in (n.start, *_starts(n.children))]


def _ms(start: datetime, end: datetime) -> int:
    return max(0, int((end - start).total_seconds() * 1000))


def _counted(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"
