"""The status of a run (a turn's or an optimization's) and how a finished run ended: one vocabulary for all layers.

A run is ACTIVE while queued or running and FINAL once succeeded, failed, cancelled or interrupted; a final run
never changes again (`ALLOWED_FROM` is the state machine the store enforces with conditional UPDATEs). A succeeded
turn is `complete`, or `partial` when a budget or the time limit stopped it and its answer was built from the
work done so far (`stop_reason` names the limit).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal


class RunStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"


ACTIVE: frozenset[RunStatus] = frozenset({RunStatus.QUEUED, RunStatus.RUNNING})
"""Not finished yet: the run may still change, a client shows it "in progress"."""

FINAL: frozenset[RunStatus] = frozenset(RunStatus) - ACTIVE
"""Finished for good: succeeded, failed, cancelled or interrupted (the server stopped or lost the run)."""

ALLOWED_FROM: dict[RunStatus, frozenset[RunStatus]] = {
    RunStatus.QUEUED: frozenset(),
    RunStatus.RUNNING: frozenset({RunStatus.QUEUED}),
    RunStatus.SUCCEEDED: frozenset({RunStatus.RUNNING}),
    RunStatus.FAILED: ACTIVE,
    RunStatus.CANCELLED: ACTIVE,
    RunStatus.INTERRUPTED: ACTIVE,
}
"""Target status -> the statuses it may be entered from (never from a final one)."""

RunOutcome = Literal["complete", "partial"]
"""How a succeeded turn ended: its own answer, or one built from its progress when a budget stopped it."""


def parse_status(value: str) -> RunStatus:
    """The status named `value`; ValueError names the valid ones."""
    try:
        return RunStatus(value)
    except ValueError:
        raise ValueError(f"unknown run status {value!r}; expected one of {', '.join(RunStatus)}") from None


__all__ = ["ACTIVE", "ALLOWED_FROM", "FINAL", "RunOutcome", "RunStatus", "parse_status"]
