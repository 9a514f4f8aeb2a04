"""Aggregate results per group (suite and length or task kind) with the papers' reference results beside them.

References (cited, not measured here):
- RLM: Zhang, Kraska & Khattab, "Recursive Language Models" (arXiv:2512.24601, 2025) evaluates RLMs on
  S-NIAH and OOLONG (trec_coarse split of oolong-synth). We do not reproduce its figures here; compare with
  the tables in that paper ("reference, see paper").
- S-NIAH follows RULER (Hsieh et al., 2024, arXiv:2404.06654); OOLONG is Bertsch et al. (arXiv:2511.02817).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fleet_rlm.bench.types import TaskResult

REFERENCES: dict[str, str] = {
    "sniah": "reference, see paper: Zhang et al., Recursive Language Models, arXiv:2512.24601 (S-NIAH)",
    "oolong": "reference, see paper: Zhang et al., Recursive Language Models, arXiv:2512.24601 (OOLONG trec_coarse)",
}


@dataclass
class GroupSummary:
    group: str
    tasks: int
    score: float
    cost_usd: float
    tokens: int
    lm_calls: float
    iterations: float
    seconds: float
    failed: int
    reference: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def group_of(result: TaskResult) -> str:
    meta = result.meta
    detail = meta.get("length") or meta.get("task") or ""
    return f"{result.suite} {detail}".strip()


def summarize(results: Iterable[TaskResult]) -> list[GroupSummary]:
    """Per group and overall: mean score, mean cost/tokens/LM calls/iterations/seconds per task."""
    groups: dict[str, list[TaskResult]] = {}
    all_results = list(results)
    for result in all_results:
        groups.setdefault(group_of(result), []).append(result)
    if len(groups) > 1:
        groups["all"] = all_results
    out = []
    for name, items in groups.items():
        n = len(items)
        suite = items[0].suite if name != "all" else ""
        out.append(
            GroupSummary(
                group=name,
                tasks=n,
                score=round(sum(r.score for r in items) / n, 4),
                cost_usd=round(sum(r.outcome.cost_usd for r in items) / n, 6),
                tokens=round(sum(r.outcome.tokens_in + r.outcome.tokens_out for r in items) / n),
                lm_calls=round(sum(r.outcome.lm_calls for r in items) / n, 2),
                iterations=round(sum(r.outcome.iterations for r in items) / n, 2),
                seconds=round(sum(r.outcome.seconds for r in items) / n, 2),
                failed=sum(1 for r in items if r.outcome.status != "succeeded"),
                reference=REFERENCES.get(suite, ""),
            )
        )
    return out
