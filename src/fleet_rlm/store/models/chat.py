"""Conversations and their material: sessions, turns, attachments (inputs) and artifacts (outputs)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field

from fleet_rlm.store.base import (
    StoreModel,
    created_field,
    fk_field,
    id_field,
    in_check,
    int_field,
    json_field,
    ref_field,
    str_field,
    text_field,
    updated_field,
)

ATTACHMENT_KINDS = ("file", "url", "text")
SOURCE_KINDS = ("text", "file", "url", "repo", "path")


class ChatSession(StoreModel, table=True):
    """A conversation. `last_run_id` is a plain reference (no FK) because runs already point at sessions.

    A fork records its origin in `forked_from_id` (a plain reference: the fork outlives a deleted origin) and
    `forked_after_turn` (how many of the origin's turns it kept).
    """

    __tablename__ = "sessions"

    id: str = id_field()
    user_id: str = fk_field("users.id", index=False)  # covered by ix(user_id, updated_at)
    workspace_id: str | None = fk_field("workspaces.id", ondelete="SET NULL", nullable=True)
    title: str = str_field(500, default="")
    summary: str | None = text_field()
    settings: dict[str, Any] = json_field()
    last_run_id: str | None = ref_field()
    forked_from_id: str | None = ref_field(index=True)
    forked_after_turn: int | None = int_field(default=None, nullable=True)
    created_at: datetime = created_field()
    updated_at: datetime = updated_field()

    __table_args__ = (sa.Index(None, "user_id", "updated_at"),)


class Turn(StoreModel, table=True):
    """One user message and its answer; `index` counts from 0 within the session."""

    __tablename__ = "turns"

    id: str = id_field()
    session_id: str = fk_field("sessions.id", index=False)  # covered by uq(session_id, index)
    index: int = int_field(default=0)
    user_message: str = text_field(default="", nullable=False)
    answer: str | None = text_field()
    run_id: str | None = ref_field(index=True)
    created_at: datetime = created_field()
    updated_at: datetime = updated_field()

    __table_args__ = (sa.UniqueConstraint("session_id", "index"),)


class Attachment(StoreModel, table=True):
    """Staged input: an uploaded file, a fetched URL or pasted text, stored under data_dir by content hash."""

    __tablename__ = "attachments"

    id: str = id_field()
    user_id: str = fk_field("users.id", index=False)  # covered by ix(user_id, sha256)
    session_id: str | None = fk_field("sessions.id", ondelete="SET NULL", nullable=True)
    kind: str = str_field(16)
    name: str = str_field(500)
    media_type: str | None = str_field(255, default=None, nullable=True)
    size: int = int_field(big=True)
    sha256: str = str_field(64)
    storage_path: str = text_field(nullable=False)
    text_path: str | None = text_field()
    source_url: str | None = text_field()
    created_at: datetime = created_field()

    __table_args__ = (sa.Index(None, "user_id", "sha256"), in_check("kind", ATTACHMENT_KINDS, name="kind"))


class SessionSource(StoreModel, table=True):
    """A context source the session holds: added by one of its turns, given to every later turn by reference
    (the document that turn loaded into the session's context directory, never loaded again) until the user
    removes it. `key` (kind and document) keeps one row per document; the first turn that loaded it wins."""

    __tablename__ = "session_sources"

    id: str = id_field()
    session_id: str = fk_field("sessions.id", index=False)  # covered by uq(session_id, key)
    key: str = str_field(128)
    kind: str = str_field(16)
    label: str = str_field(16)  # the `context_loaded` source: attachment, text, url, repository, workspace
    name: str = str_field(500)
    document: str = str_field(255)  # its file in the session's context directory (CONTEXT_DIR)
    clone: str | None = str_field(255, default=None, nullable=True)  # repos/<dir> of a repository source
    attachment_id: str | None = ref_field()
    url: str | None = text_field()
    ref: str | None = str_field(255, default=None, nullable=True)
    path: str | None = text_field()
    media_type: str | None = str_field(255, default=None, nullable=True)
    chars: int = int_field(big=True)
    bytes: int | None = int_field(default=None, nullable=True, big=True)
    truncated: bool = Field(default=False, nullable=False)
    turn_index: int = int_field(default=0)
    run_id: str | None = ref_field()
    created_at: datetime = created_field()

    __table_args__ = (sa.UniqueConstraint("session_id", "key"), in_check("kind", SOURCE_KINDS, name="kind"))


class Artifact(StoreModel, table=True):
    """A file a run produced (written in the workspace), announced by an `artifact` event."""

    __tablename__ = "artifacts"

    id: str = id_field()
    user_id: str = fk_field("users.id")
    session_id: str = fk_field("sessions.id")
    run_id: str | None = fk_field("runs.id", ondelete="SET NULL", nullable=True)
    name: str = str_field(500)
    path: str = text_field(nullable=False)
    size: int = int_field(big=True)
    sha256: str = str_field(64)
    media_type: str | None = str_field(255, default=None, nullable=True)
    created_at: datetime = created_field()
