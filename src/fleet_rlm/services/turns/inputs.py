"""What a client sends to start a turn (HTTP body or WebSocket `message` frame), validated strictly.

Unknown fields and wrong types are rejected (clients learn of typos at once); `repo_ref` needs `repo_url`; an
empty or whitespace-only task is refused with `empty_task` when a turn starts. The
fingerprint identifies an input for idempotency: the same key with a different fingerprint is a conflict.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fleet_rlm.budgets import BatchConcurrency, MaxDepth, MaxIters, MaxLLMCalls
from fleet_rlm.config import ExecutionMode
from fleet_rlm.errors import EmptyTask

MAX_TASK_CHARS = 1_000_000


class TurnInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = Field(max_length=MAX_TASK_CHARS, description="The task or message (not empty or only whitespace).")
    execution_mode: ExecutionMode | None = Field(default=None, description="auto, direct, tools or rlm.")
    attachment_ids: list[str] = Field(default_factory=list, max_length=100, description="Uploaded attachments.")
    context_text: str | None = Field(default=None, description="Pasted text to use as context.")
    urls: list[str] = Field(default_factory=list, max_length=20, description="URLs to fetch as context.")
    repo_url: str | None = Field(default=None, max_length=2000, description="Repository to clone as context.")
    repo_ref: str | None = Field(default=None, max_length=255, description="Branch or tag (needs repo_url).")
    context_paths: list[str] = Field(default_factory=list, max_length=100, description="Workspace paths.")
    batch_concurrency: BatchConcurrency | None = Field(default=None, description="Parallel sub-LM calls.")
    max_depth: MaxDepth | None = Field(default=None, description="Deepest rlm_query child level.")
    max_iters: MaxIters | None = Field(default=None, description="RLM iterations.")
    max_llm_calls: MaxLLMCalls | None = Field(default=None, description="LM calls, children included.")
    skills: list[str] = Field(default_factory=list, max_length=20, description="Skill cards to load.")

    def require_task(self) -> None:
        """EmptyTask (`empty_task`) for "" or whitespace only: one code for HTTP, WebSocket and CLI callers."""
        if not self.content.strip():
            raise EmptyTask()

    @model_validator(mode="after")
    def _repo_ref_needs_url(self) -> TurnInput:
        if self.repo_ref and not self.repo_url:
            raise ValueError("repo_ref needs repo_url")
        return self

    def fingerprint(self) -> str:
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


class MessageFrame(TurnInput):
    """WebSocket client frame that starts a turn in `session_id`."""

    type: Literal["message"]
    session_id: str
    idempotency_key: str | None = Field(default=None, max_length=255)

    def turn_input(self) -> TurnInput:
        return TurnInput.model_validate(self.model_dump(exclude={"type", "session_id", "idempotency_key"}))
