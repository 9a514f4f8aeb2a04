"""Feedback on runs: a thumbs up/down, a comment and the answer the user expected (their correction).

One per user and run: POST and PUT replace it, PATCH edits it, DELETE clears it. Listings carry the task and
the answer that was rated, so rated runs can be reviewed and turned into dataset rows.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from fleet_rlm.schemas.common import In, Out, PageMeta

Rating = Literal["up", "down"]
COMMENT = Field(default=None, max_length=10_000, description="Why (free text).")
EXPECTED = Field(
    default=None,
    max_length=100_000,
    description="The answer you expected: your correction, used as the gold answer when the rating is down.",
)


class FeedbackPut(In):
    rating: Rating
    comment: str | None = COMMENT
    expected_answer: str | None = EXPECTED


class FeedbackCreate(FeedbackPut):
    run_id: str


class FeedbackPatch(In):
    """Only the fields given change; null clears a comment or expected answer."""

    rating: Rating | None = None
    comment: str | None = COMMENT
    expected_answer: str | None = EXPECTED


class FeedbackOut(Out):
    id: str
    run_id: str
    rating: Rating
    comment: str | None
    expected_answer: str | None
    created_at: datetime
    updated_at: datetime


class RatedRunOut(FeedbackOut):
    """Feedback with the run it rates: where it ran and what was asked and answered."""

    session_id: str
    turn_id: str | None
    execution_mode: str = Field(description="The run's mode: direct, tools, rlm or auto.")
    program_version: str | None
    task: str = Field(description="The user's message of the turn.")
    answer: str = Field(description="The turn's committed answer.")


class FeedbackPage(PageMeta):
    items: list[RatedRunOut]
