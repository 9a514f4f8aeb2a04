"""The event vocabulary: every kind round-trips through JSON, parsing errors are precise, helpers behave."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from fleet_rlm.events import (
    ENVELOPE_FIELDS,
    EVENT_CLASSES,
    EVENT_TYPES,
    TERMINAL_TYPES,
    Code,
    Final,
    InvalidEvent,
    Output,
    ToolCall,
    Usage,
    event_from_parts,
    event_payload,
    event_to_json,
    json_schema,
    parse_event,
    preview,
    with_seq,
)
from tests.events.samples import ENVELOPE, PAYLOADS


def test_samples_cover_every_kind() -> None:
    assert set(PAYLOADS) == set(EVENT_TYPES)
    assert len(EVENT_CLASSES) == len(EVENT_TYPES)


@pytest.mark.parametrize("kind", sorted(EVENT_TYPES))
def test_every_kind_round_trips_through_json(kind: str) -> None:
    event = EVENT_TYPES[kind](**ENVELOPE, **PAYLOADS[kind])
    wire = json.dumps(event_to_json(event))
    parsed = parse_event(json.loads(wire))
    assert parsed == event
    assert type(parsed) is EVENT_TYPES[kind]
    assert parse_event(wire) == event  # from the JSON text directly
    data = json.loads(wire)
    assert data["type"] == kind
    assert set(ENVELOPE_FIELDS) <= set(data)
    assert data["ts"].endswith("Z")


@pytest.mark.parametrize("kind", sorted(EVENT_TYPES))
def test_store_split_and_rebuild(kind: str) -> None:
    event = with_seq(EVENT_TYPES[kind](**ENVELOPE, **PAYLOADS[kind]), 7)
    payload = event_payload(event)
    assert not set(payload) & set(ENVELOPE_FIELDS)
    envelope = {name: getattr(event, name) for name in ENVELOPE_FIELDS if name != "type"}
    assert event_from_parts(type=kind, payload=payload, **envelope) == event


def test_unknown_type_names_the_kinds() -> None:
    with pytest.raises(InvalidEvent) as info:
        parse_event({"type": "telepathy", "run_id": "r", "session_id": "s"})
    assert info.value.code == "invalid_event"
    assert "unknown event type 'telepathy'" in info.value.message
    assert "turn_started" in info.value.message and "sandbox_reset" in info.value.message


def test_missing_type_is_explained() -> None:
    with pytest.raises(InvalidEvent, match="no 'type' field"):
        parse_event({"run_id": "r", "session_id": "s", "code": "x"})


def test_missing_and_unknown_fields_are_named() -> None:
    with pytest.raises(InvalidEvent, match=r"invalid 'code' event: code: Field required"):
        parse_event({"type": "code", "run_id": "r", "session_id": "s"})
    with pytest.raises(InvalidEvent, match=r"invalid 'output' event: stream: "):
        parse_event({"type": "output", "run_id": "r", "session_id": "s", "stream": "stdin", "text": ""})
    with pytest.raises(InvalidEvent, match="colour: Extra inputs"):
        parse_event({"type": "summary", "run_id": "r", "session_id": "s", "text": "x", "colour": 1})


def test_events_are_frozen_and_with_seq_copies() -> None:
    event = Code(run_id="r", session_id="s", code="1")
    with pytest.raises(ValidationError):
        event.seq = 3  # type: ignore[misc]
    stamped = with_seq(event, 3)
    assert (event.seq, stamped.seq) == (0, 3)
    assert stamped.id == event.id and stamped.code == "1"
    with pytest.raises(ValueError):
        with_seq(event, 0)


def test_timestamps_are_normalised_to_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    event = Code(run_id="r", session_id="s", code="", ts=datetime(2025, 1, 1, 12, tzinfo=plus_two))
    assert event.ts == datetime(2025, 1, 1, 10, tzinfo=UTC) and event.ts.tzinfo is UTC
    naive = Code(run_id="r", session_id="s", code="", ts=datetime(2025, 1, 1, 12))
    assert naive.ts.tzinfo is UTC and naive.ts.hour == 12


def test_ids_are_unique_and_defaults_are_sane() -> None:
    a, b = Code(run_id="r", session_id="s", code=""), Code(run_id="r", session_id="s", code="")
    assert a.id != b.id
    assert (a.seq, a.depth, a.actor, a.parent_id) == (0, 0, "root", None)


def test_non_json_values_are_kept_as_strings() -> None:
    class Opaque:
        def __str__(self) -> str:
            return "<opaque>"

    final = Final(run_id="r", session_id="s", answer="x", fields={"obj": Opaque(), "n": 1, "s": {1}})
    assert final.fields == {"obj": "<opaque>", "n": 1, "s": "{1}"}
    call = ToolCall(run_id="r", session_id="s", call_id="c", name="t", args={"when": datetime(2025, 1, 1)})
    assert json.dumps(event_to_json(call))


def test_output_truncation_and_preview() -> None:
    assert not Output(run_id="r", session_id="s", stream="stdout", text="x").truncated
    assert Output(run_id="r", session_id="s", stream="stderr", text="x", omitted_chars=5).truncated
    assert preview("abc", 5) == "abc"
    assert preview(None) == ""
    assert preview("abcdefgh", 3) == "abc… [5 more chars]"


def test_usage_event_is_a_usage_totals() -> None:
    from fleet_rlm.events import UsageTotals

    event = Usage(run_id="r", session_id="s", **PAYLOADS["usage"])
    assert isinstance(event, UsageTotals)
    assert UsageTotals.model_validate(event_payload(event)) == UsageTotals(**PAYLOADS["usage"])


def test_terminal_kinds_exist() -> None:
    assert set(TERMINAL_TYPES) <= set(EVENT_TYPES)


def test_json_schema_covers_every_kind_with_descriptions() -> None:
    schema = json_schema()
    mapping = schema["discriminator"]["mapping"]
    assert set(mapping) == set(EVENT_TYPES)
    for kind, ref in mapping.items():
        definition = schema["$defs"][ref.rsplit("/", 1)[-1]]
        assert definition.get("description"), f"{kind} has no docstring"
        assert definition["properties"]["type"]["const"] == kind
        for name, prop in definition["properties"].items():
            assert name == "type" or prop.get("description"), f"{kind}.{name} has no description"
        assert set(definition["required"]) == set(definition["properties"])


def test_invalid_event_renders_like_a_fleet_error() -> None:
    with pytest.raises(InvalidEvent) as info:
        parse_event(b'{"type": "code"}')
    error = info.value
    assert isinstance(error, ValueError)
    assert error.to_dict()["code"] == "invalid_event" and error.to_dict()["action"]
    assert error.one_line().startswith("error[invalid_event]: invalid 'code' event:")


def test_non_objects_are_rejected_clearly() -> None:
    with pytest.raises(InvalidEvent, match="not valid JSON"):
        parse_event("{nope")
    with pytest.raises(InvalidEvent, match="got list"):
        parse_event("[1, 2]")
