"""The memoized model-metadata lookup answers exactly what DSPy's own does (a model the table names, one it
does not, declared namespaces), hands every caller its own copy, and is what DSPy's cost and capability code
calls once an LM was built; an LM built with it reports the same capabilities."""

from __future__ import annotations

import dspy
from dspy.clients import capabilities, costs, model_metadata

from fleet_rlm.config import Settings
from fleet_rlm.llm import LMProfile, build_lm
from fleet_rlm.llm import model_metadata as memo
from fleet_rlm.testing import FakeLMServer

CASES = [
    ("openai", "gpt-4o-mini", None),
    ("openai", "fake-model", None),
    ("anthropic", "claude-3-5-sonnet-20241022", None),
    ("openai", "gpt-4o-mini", ["openai"]),
    ("openai", "gpt-4o-mini", []),
]


def test_the_memo_answers_what_dspy_answers_and_copies() -> None:
    for provider, model, namespaces in CASES:
        expected = model_metadata.model_info(provider, model, namespaces=namespaces)
        assert memo.model_info(provider, model, namespaces=namespaces) == expected
        first = memo.model_info(provider, model, namespaces=namespaces)
        first["mutated"] = True
        assert "mutated" not in memo.model_info(provider, model, namespaces=namespaces)
    assert model_metadata.model_info("openai", "gpt-4o-mini")  # the table does name it: not a vacuous check


def test_building_an_lm_points_dspy_at_the_memo(lm_server: FakeLMServer, llm_settings: Settings) -> None:
    profile = LMProfile(name="root", model=lm_server.model, api_base=lm_server.base_url, api_key="k")
    lm = build_lm(profile, settings=llm_settings)
    assert costs.model_info is memo.model_info and capabilities.model_info is memo.model_info
    bare = dspy.LM(lm_server.model, api_base=lm_server.base_url, api_key="k")
    assert lm.supports_function_calling == bare.supports_function_calling
    assert lm.supports_response_schema == bare.supports_response_schema
    assert sorted(lm.supported_params) == sorted(bare.supported_params)
    assert lm("hi") == ["OK"]
