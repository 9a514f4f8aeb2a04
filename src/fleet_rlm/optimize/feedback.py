"""Build dataset rows from session transcripts and trace feedback (thumbs and expected answers).

A thumbs-up makes the committed answer the gold one; a thumbs-down counts only with an expected answer (the
user's correction). The latest feedback on a run wins. The router learns the mode of runs rated up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fleet_rlm.optimize.modules import OptimizableModule


@dataclass(frozen=True)
class FeedbackRecord:
    """One rated run: what the user asked, what was answered, and their latest verdict."""

    run_id: str
    task: str
    answer: str
    rating: str
    expected_answer: str | None = None
    execution_mode: str = "auto"
    history: str = ""


@dataclass
class FeedbackRows:
    rows: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def rows_from_feedback(module: OptimizableModule, records: Iterable[FeedbackRecord]) -> FeedbackRows:
    out = FeedbackRows()
    for record in records:
        gold = _gold(record)
        if module.name == "router":
            if record.rating != "up" or record.execution_mode not in ("direct", "tools", "rlm"):
                out.skip("router rows need a thumbs-up on a run with a concrete mode")
                continue
            out.rows.append({"task": record.task, "mode": record.execution_mode, "_run_id": record.run_id})
            continue
        if "task" not in module.input_keys or module.output_keys != ("answer",):
            out.skip(f"module '{module.name}' cannot be built from transcripts")
            continue
        if gold is None:
            out.skip("thumbs-down without an expected answer")
            continue
        row: dict[str, Any] = {"task": record.task, "answer": gold, "_run_id": record.run_id}
        if "history" in module.optional_keys and record.history:
            row["history"] = record.history
        out.rows.append(row)
    return out


def _gold(record: FeedbackRecord) -> str | None:
    if record.expected_answer and record.expected_answer.strip():
        return record.expected_answer.strip()
    if record.rating == "up" and record.answer.strip():
        return record.answer.strip()
    return None
