"""Structured results of the MCP tools (their JSON Schemas are the tools' output schemas)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Row(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class RunResult(BaseModel):
    run_id: str
    session_id: str = Field(description="Pass it as session_id to continue the conversation.")
    status: str
    answer: str
    mode: str | None = Field(default=None, description="The execution mode that ran.")
    outcome: str | None = Field(default=None, description="complete, or partial when a budget stopped the run.")
    stop_reason: str | None = Field(default=None, description="The budget that stopped a partial run.")


class SessionInfo(_Row):
    id: str
    title: str
    summary: str | None
    last_run_id: str | None
    created_at: datetime
    updated_at: datetime


class SessionList(BaseModel):
    items: list[SessionInfo]
    total: int


class TurnInfo(_Row):
    index: int
    user_message: str
    answer: str | None
    run_id: str | None
    created_at: datetime


class TurnList(BaseModel):
    session_id: str
    title: str
    items: list[TurnInfo]
    total: int


class EventPage(BaseModel):
    run_id: str
    status: str
    items: list[dict[str, Any]]
    next_after: int | None = Field(description="Pass as `after` for the next page; null at the end.")
    last_seq: int


class CancelState(BaseModel):
    run_id: str
    status: str
    cancel_requested: bool
