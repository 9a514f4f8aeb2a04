"""Sessions, turns and the export bundle."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from fleet_rlm.schemas.artifacts import ArtifactOut
from fleet_rlm.schemas.common import In, Out, PageMeta
from fleet_rlm.schemas.runs import EventOut, RunOut


class SessionOut(Out):
    id: str
    title: str
    summary: str | None
    settings: dict[str, Any]
    workspace_id: str | None
    last_run_id: str | None
    forked_from_id: str | None = Field(description="Session this one was forked from (null unless a fork).")
    forked_after_turn: int | None = Field(description="Turns kept from the origin when forking (null unless a fork).")
    created_at: datetime
    updated_at: datetime


class ForkRef(Out):
    """A session forked from this one."""

    id: str
    title: str
    forked_after_turn: int | None
    created_at: datetime


class SessionDetail(SessionOut):
    forks: list[ForkRef] = Field(description="Sessions forked from this one (oldest first, at most 200).")


class ForkCreate(In):
    after_turn: int | None = Field(
        default=None,
        ge=0,
        description="Keep the origin's turns 1..after_turn (turns count from 1; TurnOut.index + 1). "
        "Default: all its turns.",
    )
    title: str | None = Field(default=None, max_length=500, description="Default: the origin's title + fork point.")


class SessionPage(PageMeta):
    items: list[SessionOut]


class SessionCreate(In):
    title: str = Field(default="", max_length=500)
    settings: dict[str, Any] = Field(default_factory=dict, description="Per-session options (mode, budgets...).")


class SessionUpdate(In):
    """Only the fields present change."""

    title: str | None = Field(default=None, max_length=500)
    summary: str | None = Field(default=None, max_length=100_000)
    settings: dict[str, Any] | None = None


class ActiveRun(BaseModel):
    id: str
    status: str = Field(description="queued or running.")
    created_at: datetime


class SessionState(BaseModel):
    session_id: str
    title: str
    updated_at: datetime
    active_run: ActiveRun | None


class SessionStates(BaseModel):
    """The caller's sessions that have a queued or running run (the rest are idle)."""

    items: list[SessionState]


class TurnOut(Out):
    id: str
    session_id: str
    index: int
    user_message: str
    answer: str | None
    run_id: str | None
    created_at: datetime
    updated_at: datetime
    status: str | None = Field(
        default=None,
        description="Its run's status: queued, running, succeeded, failed, cancelled or interrupted (null: no run).",
    )
    error: dict[str, Any] | None = Field(
        default=None, description="Why its run failed or was interrupted (code, message, action), else null."
    )


class TurnPage(PageMeta):
    items: list[TurnOut]


class ContextSourceOut(BaseModel):
    """One context source the session holds: added by one of its turns and given to every later turn until it
    is removed (DELETE /api/v1/sessions/{id}/context/{source_id})."""

    id: str | None = Field(
        default=None, description="Its id, to remove it; none for context of turns from before sessions held any."
    )
    turn: int = Field(description="The turn that added it, counting from 1.")
    run_id: str
    source: str = Field(description="file, attachment, text, url, repository, workspace, history or other.")
    name: str = Field(description="File name, URL, repository@ref or label.")
    chars: int = Field(description="Characters of text the turn saw.")
    bytes: int | None = Field(description="Size of the raw source in bytes, when known.")
    variable: str | None = Field(description="REPL variable holding it, in RLM mode.")
    truncated: bool = Field(description="True when the source was cut to a size limit.")
    document: str | None = Field(default=None, description="Its document's file name in the sandbox's CONTEXT_DIR.")
    loaded_at: datetime


class SessionContext(BaseModel):
    """The context sources a session holds, oldest turn first (a fork holds those of the turns it kept)."""

    items: list[ContextSourceOut]


class SessionExport(BaseModel):
    """Everything about one session in one JSON document."""

    format: Literal["fleet-rlm.session-export/1"] = "fleet-rlm.session-export/1"
    exported_at: datetime
    session: SessionOut
    turns: list[TurnOut]
    runs: list[RunOut]
    events: list[EventOut]
    artifacts: list[ArtifactOut]
    redactions: dict[str, int] = Field(
        default_factory=dict,
        description="What the export replaced, counts by kind (github_token, password_field, configured_secret, "
        "host_path...): the rules are in docs/security.md, Share redaction.",
    )
