"""Optimization: modules, datasets, GEPA runs (with live progress), comparisons and program versions."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from fleet_rlm.events.status import RunStatus
from fleet_rlm.schemas.common import In, Out


class ModuleOut(BaseModel):
    name: str
    kind: Literal["program", "task", "skill"]
    description: str
    signature: str
    required_keys: list[str]
    optional_keys: list[str]
    metric: str
    metric_description: str
    targets: dict[str, str] = Field(description="Optimized predictor -> the runtime program it replaces.")


class DatasetCreate(In):
    module: str
    name: str = Field(min_length=1, max_length=255)
    content: str = Field(description="The file's text: JSONL (one object per line) or CSV with a header row.")
    filename: str = Field(default="data.jsonl", description="Its extension (.jsonl or .csv) picks the format.")


class DatasetFromFeedback(In):
    module: str
    name: str = Field(min_length=1, max_length=255)
    session_ids: list[str] | None = Field(default=None, description="Only these sessions (default: all).")
    run_ids: list[str] | None = Field(
        default=None, max_length=5000, description="Only these rated runs (default: every rated run)."
    )


class DatasetOut(Out):
    id: str
    module: str
    name: str
    row_count: int
    created_at: datetime
    updated_at: datetime


class DatasetDetail(DatasetOut):
    rows: list[dict[str, Any]] = Field(description="The first rows (see `limit`).")
    skipped: dict[str, int] = Field(default_factory=dict, description="Feedback rows left out, by reason.")


class RunCreate(In):
    module: str
    dataset_id: str
    auto: Literal["light", "medium", "heavy"] | None = Field(default=None, description="GEPA's auto budget.")
    max_metric_calls: int | None = Field(default=None, ge=1, description="Instead of auto: a metric-call budget.")
    val_fraction: float = Field(default=0.3, gt=0, lt=1)
    seed: int = 0
    threads: int = Field(default=1, ge=1, le=16)
    reflection_minibatch_size: int = Field(default=3, ge=1, le=50)


class RunOut(Out):
    id: str
    module: str
    dataset_id: str | None
    status: RunStatus = Field(
        description="queued or running (active); succeeded, failed, cancelled or interrupted (final)."
    )
    config: dict[str, Any]
    progress: dict[str, Any] = Field(
        description="phase, iteration, metric_calls, max_metric_calls, best_score, baseline_score, evaluated, total."
    )
    scores: dict[str, Any] = Field(description="baseline and optimized validation scores, metric_calls, iterations.")
    error: dict[str, Any] | None
    program_version: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    cancel_requested_at: datetime | None


class RunResults(BaseModel):
    run_id: str
    examples: list[dict[str, Any]]
    instructions_before: dict[str, str]
    instructions_after: dict[str, str]
    report_markdown: str


class CompareOut(BaseModel):
    a: dict[str, Any]
    b: dict[str, Any]
    same_module: bool
    delta: float | None = Field(description="b's optimized validation score minus a's.")
    examples: list[dict[str, Any]]
    better: int
    worse: int


PromotionScope = Literal["user", "global"]


class VersionOut(Out):
    """A program version as the caller may see it: their own, or one promoted for every user (then without
    its owner's dataset name and run id)."""

    id: str
    module: str
    version: str
    owned: bool = Field(default=False, description="You saved it (it came from one of your runs).")
    promoted: bool = Field(description="Your turns run this version (your own promotion, else the global one).")
    promoted_at: datetime | None = Field(description="When the promotion your turns follow was made.")
    promoted_for_you: bool = Field(default=False, description="Currently promoted for your turns only.")
    promoted_globally: bool = Field(default=False, description="Currently promoted for every user (by an admin).")
    manifest: dict[str, Any]
    created_at: datetime


class RollbackOut(BaseModel):
    module: str
    scope: PromotionScope = Field(default="user", description="Whose promotion was withdrawn: yours or global.")
    promoted: VersionOut | None = Field(description="The version your turns now run; null means the built-in program.")


class PromotionOut(BaseModel):
    """A run's saved version beside the version the promotion would replace, on the run's validation rows."""

    module: str
    candidate_version: str
    candidate_score: float | None = Field(description="The run's version, scored on its validation rows.")
    current_version: str = Field(description="What the scope runs now (builtin-1: the built-in program).")
    current_score: float | None = Field(
        description="The current version on the same rows; null when this run did not score it (then the "
        "candidate is not known to be better)."
    )
    rows: int = Field(description="How many validation rows both scores are over.")
    better: bool = Field(description="The candidate is strictly better; otherwise promoting needs confirm=true.")
    already_current: bool = Field(default=False, description="The scope already runs the candidate.")
