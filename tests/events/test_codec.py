"""A live event's stored row and client JSON come from one serialization and match the two-step forms exactly."""

from __future__ import annotations

import pytest

from fleet_rlm.events import EVENT_TYPES, event_to_json, with_seq
from fleet_rlm.services.live.codec import numbered, to_new_event
from tests.events.samples import ENVELOPE, PAYLOADS


@pytest.mark.parametrize("kind", sorted(EVENT_TYPES))
def test_numbered_matches_the_row_and_json_of_the_numbered_event(kind: str) -> None:
    event = EVENT_TYPES[kind](**ENVELOPE, **PAYLOADS[kind])
    row, body = numbered(event, 7)
    assert body == event_to_json(with_seq(event, 7))
    assert list(body) == list(event_to_json(with_seq(event, 7)))  # same key order on the wire
    assert row == to_new_event(event)


def test_numbered_refuses_a_seq_below_one() -> None:
    event = EVENT_TYPES["status"](**ENVELOPE, **PAYLOADS["status"])
    with pytest.raises(ValueError, match="starts at 1"):
        numbered(event, 0)
