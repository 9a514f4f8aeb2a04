"""Between typed events and their stored rows: envelope columns plus a payload holding the kind's fields.

The event `id` and `session_id` ride in the payload (the table keys rows by run and seq), so a row rebuilds into
exactly the JSON a live client saw.
"""

from __future__ import annotations

from typing import Any

from fleet_rlm.events import EventBase, event_to_json, payload_of
from fleet_rlm.store.models import RunEvent
from fleet_rlm.store.repos.events import NewEvent


def to_new_event(event: EventBase) -> NewEvent:
    return _row(event, event_to_json(event))


def numbered(event: EventBase, seq: int) -> tuple[NewEvent, dict[str, Any]]:
    """The stored row and the client JSON of `event` numbered `seq`, from one serialization (every live event
    takes this path, and serializing each twice was a visible share of a turn's CPU)."""
    if seq < 1:
        raise ValueError(f"a persisted event's seq starts at 1, got {seq}")
    body = event_to_json(event)
    body["seq"] = seq
    return _row(event, body), body


def _row(event: EventBase, body: dict[str, Any]) -> NewEvent:
    """The stored row of `event` from its client JSON `body`."""
    payload = payload_of(body)
    payload["id"] = body["id"]
    payload["session_id"] = body["session_id"]
    return NewEvent(
        type=event.type,
        payload=payload,
        ts=event.ts,
        depth=event.depth,
        actor=event.actor,
        parent_id=event.parent_id,
    )


def row_to_json(row: RunEvent, *, session_id: str | None = None) -> dict[str, Any]:
    """The client-visible JSON of a stored event (same keys and values as it had live)."""
    payload = dict(row.payload or {})
    body: dict[str, Any] = {
        "id": payload.pop("id", f"{row.run_id}:{row.seq}"),
        "type": row.type,
        "run_id": row.run_id,
        "session_id": payload.pop("session_id", session_id),
        "seq": row.seq,
        "ts": row.ts.isoformat().replace("+00:00", "Z"),
        "depth": row.depth,
        "actor": row.actor or "root",
        "parent_id": row.parent_id,
    }
    body.update(payload)
    return body
