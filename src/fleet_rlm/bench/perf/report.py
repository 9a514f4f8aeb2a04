"""Rows of the performance table, the JSON result file and the Markdown table printed at the end of a run.

Every row carries our figure, each baseline's figure measured in the same run, the ratio to the first baseline
with a figure, the target and whether it was met. A figure that could not be measured is `None` with a reason in
`note`, so the table never has a silently empty cell.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

Direction = Literal["max", "min"]


@dataclass
class Row:
    scenario: str
    metric: str
    unit: str
    ours: float | None
    baselines: dict[str, float | None] = field(default_factory=dict)
    target: float | None = None
    """Bound on `ours` (unit as `unit`), or on the ratio when `target_is_ratio`."""
    target_is_ratio: bool = False
    note: str = ""

    @property
    def ratio(self) -> float | None:
        base = next((v for v in self.baselines.values() if v), None)
        if self.ours is None or not base:
            return None
        return self.ours / base

    @property
    def met(self) -> bool | None:
        if self.target is None:
            return None
        value = self.ratio if self.target_is_ratio else self.ours
        return None if value is None else value <= self.target

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ratio"] = self.ratio
        data["met"] = self.met
        return data


def fmt(value: float | None, unit: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if abs(value) >= 100:
        text = f"{value:,.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.3g}" if abs(value) >= 0.01 else f"{value:.2g}"
    return f"{text} {unit}".rstrip()


def _target(row: Row) -> str:
    if row.target is None:
        return "—"
    return f"<= {row.target:g}x" if row.target_is_ratio else f"<= {fmt(row.target, row.unit)}"


def markdown_table(rows: list[Row]) -> str:
    head = "| Scenario | Metric | fleet-rlm | Baselines (same run) | Ratio | Target | Met | Note |"
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        baselines = "; ".join(f"{name}: {fmt(value, row.unit)}" for name, value in row.baselines.items()) or "—"
        ratio = "—" if row.ratio is None else f"{row.ratio:.2f}x"
        met = {True: "yes", False: "**no**", None: "—"}[row.met]
        note = row.note.replace("|", "/").replace("\n", " ")
        cells = [row.scenario, row.metric, fmt(row.ours, row.unit), baselines, ratio, _target(row), met, note]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


@dataclass
class Report:
    machine: dict[str, Any]
    quick: bool
    rows: list[Row] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    """Scenario -> why it could not run at all (its rows are then missing; the table says so)."""
    durations_s: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "quick": self.quick,
            "machine": self.machine,
            "rows": [row.to_json() for row in self.rows],
            "errors": self.errors,
            "durations_s": self.durations_s,
        }

    def markdown(self) -> str:
        rows = list(self.rows)
        for scenario, error in self.errors.items():
            rows.append(Row(scenario, "(scenario failed)", "", None, note=error))
        return markdown_table(rows)

    def write(self, directory: Path) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        stamp = str(self.machine.get("started_at", "run")).replace(":", "").replace("-", "")
        path = directory / f"perf-{'quick-' if self.quick else ''}{stamp}.json"
        path.write_text(json.dumps(self.to_json(), indent=2, default=str) + "\n", encoding="utf-8")
        (directory / f"perf-{'quick-' if self.quick else ''}latest.json").write_text(
            path.read_text(encoding="utf-8"), encoding="utf-8"
        )
        return path
