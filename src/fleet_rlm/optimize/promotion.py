"""Is a run's saved version better than the version it would replace, on the same validation rows?

A run scores its baseline on its validation rows with the version the user's turns ran when it started
(`config.baseline_version`: their promoted version, else the built-in) and its candidate on the same rows. So
the candidate can be compared with the version a promotion replaces only when that is the run's baseline
version; any other version was not scored on these rows, and the promotion is not known to be better.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from fleet_rlm.errors import Conflict
from fleet_rlm.runtime.programs import BUILTIN_VERSION


@dataclass(frozen=True)
class PromotionCheck:
    module: str
    candidate_version: str
    candidate_score: float | None
    current_version: str
    current_score: float | None  # None: the current version was not scored on these rows
    rows: int
    better: bool  # strictly better on the same validation rows
    already_current: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _score(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


def check_promotion(
    *,
    module: str,
    candidate_version: str,
    scores: Mapping[str, Any],
    config: Mapping[str, Any],
    current_version: str | None,
) -> PromotionCheck:
    """`current_version`: the version the promotion's scope runs now (None: the built-in)."""
    current = current_version or BUILTIN_VERSION
    baseline_version = str(config.get("baseline_version") or BUILTIN_VERSION)
    candidate_score = _score(scores.get("optimized"))
    current_score = _score(scores.get("baseline")) if current == baseline_version else None
    better = candidate_score is not None and current_score is not None and candidate_score > current_score
    return PromotionCheck(
        module=module,
        candidate_version=candidate_version,
        candidate_score=candidate_score,
        current_version=current,
        current_score=current_score,
        rows=int(config.get("val_size") or 0),
        better=better,
        already_current=current == candidate_version,
    )


def fmt(score: float | None) -> str:
    return "not scored" if score is None else f"{score:.3f}"


def not_better(check: PromotionCheck) -> Conflict:
    if check.current_score is None:
        why = f"{check.current_version} was not scored on these rows"
    else:
        why = f"not better than {check.current_version} ({fmt(check.current_score)})"
    return Conflict(
        f"{check.candidate_version} scored {fmt(check.candidate_score)} on the run's {check.rows} validation rows, "
        f"{why}; not promoted",
        code="promotion_not_better",
        details=check.to_dict(),
    )
