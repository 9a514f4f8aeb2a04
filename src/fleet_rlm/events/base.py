"""The envelope every event carries, and the small value types event payloads share.

Events are built by the runtime before they are persisted, so `seq` starts at 0 ("not yet stored") and the
persistence layer stamps the real, per-run monotonic value with `with_seq`. Models are frozen: an event is a
fact that was (or will be) shown to a client; derive a changed copy instead of mutating one.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

PREVIEW_CHARS = 2000
"""Longest text kept in `*_preview` fields; producers cut longer text with `preview()`."""

ENVELOPE_FIELDS = ("id", "type", "run_id", "session_id", "seq", "ts", "depth", "actor", "parent_id")
"""Fields every event has; everything else is the kind's payload (see `event_payload`)."""


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_event_id() -> str:
    return uuid.uuid4().hex


def preview(text: str | None, limit: int = PREVIEW_CHARS) -> str:
    """Cut `text` to at most `limit` characters, marking the cut with an ellipsis and the omitted count."""
    if not text:
        return ""
    if len(text) <= limit:
        return text
    omitted = len(text) - limit
    return f"{text[:limit]}… [{omitted} more chars]"


def _jsonable(value: Any) -> Any:
    """Coerce arbitrary tool args / output fields into plain JSON (unknown objects become their str())."""
    if value is None:
        return {}
    return json.loads(json.dumps(value, default=str))


JsonDict = Annotated[dict[str, Any], BeforeValidator(_jsonable)]
"""A JSON object; values that are not JSON (objects, sets...) are stored as their string form."""


class Payload(BaseModel):
    """Base of the value objects nested in events: frozen, strict about unknown keys."""

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_serialization_defaults_required=True)


class EventBase(BaseModel):
    """The envelope. Every kind subclasses this and narrows `type` to its own literal name."""

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_serialization_defaults_required=True)

    id: str = Field(default_factory=new_event_id, description="Unique id of this event (hex uuid).")
    type: str = Field(description="The event kind; selects the payload fields.")
    run_id: str = Field(description="Run this event belongs to.")
    session_id: str = Field(description="Session the run belongs to.")
    seq: int = Field(
        default=0,
        ge=0,
        description="Position in the run's event log: dense and monotonic per run, assigned when persisted "
        "(0 means not yet persisted).",
    )
    ts: datetime = Field(default_factory=utcnow, description="When it happened (UTC, ISO 8601).")
    depth: int = Field(default=0, ge=0, description="Recursion depth of the actor: 0 root, 1 child, ...")
    actor: str = Field(
        default="root",
        description="Who emitted it: `root`, `child:{child_id}`, `router`, `tools` or `runner`.",
    )
    parent_id: str | None = Field(
        default=None, description="Id of the enclosing step or child (e.g. the child_id of a child's events)."
    )

    @field_validator("ts", mode="after")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
