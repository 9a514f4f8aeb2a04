"""DSPy's adapter utilities, once an LM was built, format and parse exactly what they did with a fresh
`TypeAdapter` per value, build one adapter per class, and still build non-class annotations afresh."""

from __future__ import annotations

from typing import Literal

import pydantic
from dspy.adapters import utils
from pydantic import TypeAdapter

from fleet_rlm.config import Settings
from fleet_rlm.llm import LMProfile, build_lm
from fleet_rlm.llm import type_adapters as memo
from fleet_rlm.testing import FakeLMServer


class Point(pydantic.BaseModel):
    x: int
    y: int


VALUES = ["text", 3, 2.5, None, True, [1, "a"], {"k": [1, 2]}, Point(x=1, y=2), {"p": Point(x=3, y=4)}, object()]


def fresh(value: object) -> object:
    try:
        return TypeAdapter(type(value)).dump_python(value, mode="json", fallback=str)
    except Exception:
        return str(value)


def test_built_lms_point_dspy_at_the_memo_and_answers_do_not_change(
    lm_server: FakeLMServer, llm_settings: Settings
) -> None:
    profile = LMProfile(name="root", model=lm_server.model, api_base=lm_server.base_url, api_key="k")
    build_lm(profile, settings=llm_settings)
    assert utils.TypeAdapter is memo.type_adapter
    for value in VALUES:
        expected = fresh(value)
        if type(value) is object:
            assert isinstance(utils.serialize_for_json(value), str)  # str(value): its address, not stable
            continue
        assert utils.serialize_for_json(value) == expected
        assert utils.serialize_for_json(value) == expected  # from the memo the second time
    assert utils.parse_value("[1, 2]", list[int]) == [1, 2]
    assert utils.parse_value('{"x": 1, "y": 2}', Point) == Point(x=1, y=2)
    assert utils.parse_value("b", Literal["a", "b"]) == "b"


def test_one_adapter_per_class_and_none_kept_for_other_annotations() -> None:
    assert memo.type_adapter(Point) is memo.type_adapter(Point)
    assert memo.type_adapter(list[int]) is not memo.type_adapter(list[int])
    assert memo.type_adapter(Point, config=None) is not memo.type_adapter(Point)
    memo.install()
    memo.install()  # idempotent
    assert utils.TypeAdapter is memo.type_adapter
