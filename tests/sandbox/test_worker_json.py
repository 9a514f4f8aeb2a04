"""The worker's JSON (`worker_json`, on `_json`) writes and reads exactly what `json` does, and so does its
fallback onto the json package."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fleet_rlm.sandbox import worker_json

CODECS = {"_json": worker_json._c_codec, "json": worker_json._json_codec}

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(scalars, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=30)


@pytest.fixture(params=sorted(CODECS))
def codec(request: pytest.FixtureRequest) -> tuple[Any, Any]:
    return worker_json._checked(CODECS[request.param])


def test_the_c_codec_is_the_one_in_use() -> None:
    assert worker_json.dumps.__qualname__.startswith("_c_codec")


@given(value=values)
def test_same_text_and_values_as_json(value: Any) -> None:
    for make in CODECS.values():
        dumps, loads = make()
        assert dumps(value) == json.dumps(value, ensure_ascii=False)
        compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        assert dumps(value, compact=True) == compact
        assert loads(compact) == json.loads(compact) == value


def test_non_json_values_and_nan(codec: tuple[Any, Any]) -> None:
    dumps, loads = codec
    assert dumps({"o": (1, 2), "s": {3}.__class__}, compact=True, default=repr) == '{"o":[1,2],"s":"<class \'set\'>"}'
    with pytest.raises(TypeError):
        dumps({"o": object()})
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError):
        dumps(cyclic)
    assert dumps([math.inf, math.nan]) == "[Infinity, NaN]"
    with pytest.raises(ValueError):
        dumps([math.nan], allow_nan=False)
    assert math.isnan(loads(' {"x": NaN} ')["x"])


@pytest.mark.parametrize("text", ["", "  ", "[1] x", '{"a":', '"\x01"', "nul", "[1,]", "{'a': 1}"])
def test_malformed_text_is_a_value_error(codec: tuple[Any, Any], text: str) -> None:
    _, loads = codec
    with pytest.raises(ValueError):
        loads(text)
