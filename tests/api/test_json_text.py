"""The streamed JSON text: what json.dumps gave, compact, for everything an event can hold."""

from __future__ import annotations

import json
import math

from fleet_rlm.api.json_text import json_text


def test_matches_the_stdlib_compact_text() -> None:
    event = {"seq": 3, "type": "output", "payload": {"text": 'héllo ✓ \n"q"', "n": [1, 2.5, None, True]}}
    assert json_text(event) == json.dumps(event, separators=(",", ":"), ensure_ascii=False)


def test_integer_keys_are_strings_as_in_the_stdlib() -> None:
    assert json.loads(json_text({1: "a"})) == {"1": "a"}


def test_non_finite_floats_become_null_not_invalid_json() -> None:
    assert json.loads(json_text({"x": math.nan, "y": math.inf})) == {"x": None, "y": None}


def test_what_orjson_refuses_still_encodes_as_utf8() -> None:
    huge = 2**80
    text = json_text({"big": huge, "lone": "a\ud800b"})
    text.encode()  # no lone surrogate left in the text
    assert json.loads(text) == {"big": huge, "lone": "a\ud800b"}
