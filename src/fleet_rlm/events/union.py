"""The `Event` union: parsing, JSON form, the store's envelope/payload split, and the JSON Schema export.

Parsing is strict (unknown kinds and unknown fields are rejected) and failures raise `InvalidEvent`, whose
message names the offending kind or field, so a bad producer is caught where it emits.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, TypeVar

from pydantic import Field, TypeAdapter, ValidationError

from fleet_rlm.events.base import ENVELOPE_FIELDS, EventBase
from fleet_rlm.events.lifecycle import (
    BudgetExhausted,
    ContextLoaded,
    ErrorEvent,
    RouteDecision,
    SandboxReset,
    Status,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
    TurnInterrupted,
    TurnQueued,
    TurnStarted,
    WarningEvent,
)
from fleet_rlm.events.results import ArtifactCreated, Final, MemoryUpdated, Summary, Usage
from fleet_rlm.events.sessions import SessionForked
from fleet_rlm.events.steps import (
    ChildEnd,
    ChildProgress,
    ChildStart,
    Code,
    LMCall,
    Output,
    Reasoning,
    ReplRestored,
    ReplVariables,
    SubLMEnd,
    SubLMStart,
    ToolCall,
    ToolResult,
)

Event = Annotated[
    TurnQueued
    | TurnStarted
    | TurnFinished
    | TurnFailed
    | TurnCancelled
    | TurnInterrupted
    | Status
    | RouteDecision
    | ContextLoaded
    | Reasoning
    | Code
    | Output
    | ReplVariables
    | ReplRestored
    | ToolCall
    | ToolResult
    | SubLMStart
    | SubLMEnd
    | LMCall
    | ChildStart
    | ChildProgress
    | ChildEnd
    | WarningEvent
    | BudgetExhausted
    | ArtifactCreated
    | MemoryUpdated
    | Usage
    | Final
    | Summary
    | ErrorEvent
    | SandboxReset
    | SessionForked,
    Field(discriminator="type"),
]
"""Any event a client can see, discriminated by `type`."""

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)

EVENT_CLASSES: tuple[type[EventBase], ...] = (
    TurnQueued,
    TurnStarted,
    TurnFinished,
    TurnFailed,
    TurnCancelled,
    TurnInterrupted,
    Status,
    RouteDecision,
    ContextLoaded,
    Reasoning,
    Code,
    Output,
    ReplVariables,
    ReplRestored,
    ToolCall,
    ToolResult,
    SubLMStart,
    SubLMEnd,
    LMCall,
    ChildStart,
    ChildProgress,
    ChildEnd,
    WarningEvent,
    BudgetExhausted,
    ArtifactCreated,
    MemoryUpdated,
    Usage,
    Final,
    Summary,
    ErrorEvent,
    SandboxReset,
    SessionForked,
)
"""Every kind, in documentation order."""

EVENT_TYPES: dict[str, type[EventBase]] = {cls.model_fields["type"].default: cls for cls in EVENT_CLASSES}
"""Kind name -> model class."""

TERMINAL_TYPES = frozenset({"turn_finished", "turn_failed", "turn_cancelled", "turn_interrupted"})
"""Kinds that close a turn; exactly one ends every run's stream."""

E = TypeVar("E", bound=EventBase)


class InvalidEvent(ValueError):
    """An event could not be parsed; the message names the kind and the field.

    Shaped like fleet_rlm.errors.FleetError (code, message, action, status, one_line) without importing it:
    the layer contract keeps events, config and errors independent leaves.
    """

    code = "invalid_event"
    status = 422

    def __init__(self, message: str, *, action: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.action = action

    def to_dict(self) -> dict[str, Any]:
        body = {"code": self.code, "message": self.message}
        return {**body, "action": self.action} if self.action else body

    def one_line(self) -> str:
        text = f"error[{self.code}]: {self.message}"
        return f"{text} — {self.action}" if self.action else text


def _describe(exc: ValidationError, kind: object) -> str:
    first = exc.errors()[0]
    if first["type"] == "union_tag_invalid":
        return f"unknown event type {kind!r}; expected one of: {', '.join(EVENT_TYPES)}"
    if first["type"] == "union_tag_not_found":
        return "event has no 'type' field; every event names its kind in 'type'"
    location = ".".join(str(part) for part in first["loc"][1:]) or "event"
    return f"invalid {kind!r} event: {location}: {first['msg']}"


def parse_event(data: dict[str, Any] | str | bytes) -> Event:
    """Parse one event from its JSON form (a dict, or a JSON string/bytes). Raises InvalidEvent."""
    action = "Emit events through fleet_rlm.events models; see docs/events.md."
    if isinstance(data, str | bytes):
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise InvalidEvent(f"event is not valid JSON: {exc}", action=action) from exc
    if not isinstance(data, dict):
        raise InvalidEvent(f"an event is a JSON object, got {type(data).__name__}", action=action)
    try:
        return EVENT_ADAPTER.validate_python(data)
    except ValidationError as exc:
        raise InvalidEvent(_describe(exc, data.get("type")), action=action) from exc


def event_to_json(event: EventBase) -> dict[str, Any]:
    """The event as clients receive it: a JSON-compatible dict (timestamps as ISO 8601 strings)."""
    return event.model_dump(mode="json")


def with_seq(event: E, seq: int) -> E:
    """A copy of `event` with the seq the persistence layer assigned."""
    if seq < 1:
        raise ValueError(f"a persisted event's seq starts at 1, got {seq}")
    return event.model_copy(update={"seq": seq})


def event_payload(event: EventBase) -> dict[str, Any]:
    """The kind-specific fields only (JSON form): what the store keeps next to the envelope columns."""
    return payload_of(event_to_json(event))


def payload_of(body: dict[str, Any]) -> dict[str, Any]:
    """`event_payload` of an event already in its JSON form."""
    return {k: v for k, v in body.items() if k not in ENVELOPE_FIELDS}


def event_from_parts(*, type: str, payload: dict[str, Any], **envelope: Any) -> Event:
    """Rebuild an event from a stored row: its envelope columns plus the payload dict."""
    return parse_event({**payload, **envelope, "type": type})


def json_schema() -> dict[str, Any]:
    """JSON Schema of the union as clients receive it (serialization mode: defaulted fields are present)."""
    schema = EVENT_ADAPTER.json_schema(mode="serialization", ref_template="#/$defs/{model}")
    schema["title"] = "FleetEvent"
    schema["description"] = "Any event of a fleet-rlm run, discriminated by `type`. See docs/events.md."
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
