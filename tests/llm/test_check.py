"""check_lm and list_models against the fake LM over HTTP: success and each failure's code and action."""

from __future__ import annotations

import pytest

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.llm import LMCallError, LMProfile, check_lm, classify, failure_code, list_models
from fleet_rlm.testing import FakeLMServer, FakeResponse


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_check_ok(lm_server: FakeLMServer, fake_profile: LMProfile, llm_settings: Settings, engine: str) -> None:
    lm_server.push("OK")
    result = check_lm(fake_profile.model_copy(update={"engine": engine}), llm_settings)
    assert result.ok and result.error_code is None
    assert "OK" not in result.model_dump_json(), "a check never echoes the endpoint's answer"
    assert result.engine == ("lm15" if engine == "auto" else "litellm")
    assert (result.profile, result.model) == ("fake", lm_server.model)
    assert len(lm_server.requests) == 1


@pytest.mark.parametrize("engine", ["auto", "litellm"])
@pytest.mark.parametrize(
    ("response", "code", "action_word"),
    [
        (FakeResponse(status=401, error="Incorrect API key provided."), "lm_auth_failed", "API key"),
        (FakeResponse.rate_limited(retry_after=0.1), "lm_rate_limited", "retry"),
        (FakeResponse(status=404, error="The model does not exist."), "lm_model_not_found", "model name"),
        (FakeResponse.server_error(503), "lm_server_error", "retry"),
    ],
)
def test_check_maps_provider_errors(
    lm_server: FakeLMServer,
    fake_profile: LMProfile,
    llm_settings: Settings,
    engine: str,
    response: FakeResponse,
    code: str,
    action_word: str,
) -> None:
    lm_server.push(response)
    result = check_lm(fake_profile.model_copy(update={"engine": engine}), llm_settings)
    assert not result.ok
    assert result.error_code == code, result.error_message
    assert result.action is not None and action_word in result.action
    assert result.error_message
    assert len(lm_server.requests) == 1  # a check never retries


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_check_timeout(lm_server: FakeLMServer, fake_profile: LMProfile, llm_settings: Settings, engine: str) -> None:
    lm_server.push(FakeResponse.hanging(hang_s=5))
    result = check_lm(fake_profile.model_copy(update={"engine": engine}), llm_settings, timeout_s=0.5)
    assert not result.ok and result.error_code == "lm_timeout", result.error_message
    assert result.action is not None and "lm_timeout_s" in result.action


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_check_unreachable(llm_settings: Settings, closed_port: int, engine: str) -> None:
    profile = LMProfile(
        name="down", model="openai/x", api_base=f"http://127.0.0.1:{closed_port}/v1", api_key="k", engine=engine
    )
    result = check_lm(profile, llm_settings, timeout_s=2)
    assert not result.ok and result.error_code == "lm_unreachable", result.error_message
    assert result.action is not None and "api_base" in result.action
    assert f"http://127.0.0.1:{closed_port}/v1" in result.action and "profile 'down'" in result.action
    assert "DSPY_LM_API_BASE" not in result.action  # the profile's own URL is at fault, not the environment


def test_check_reports_an_unusable_profile(llm_settings: Settings) -> None:
    result = check_lm(LMProfile(name="bad", model="openai/"), llm_settings)
    assert not result.ok and result.error_code == "invalid_profile"


def test_classify_passes_fleet_errors_and_names_the_model() -> None:
    original = FleetError("x", code="custom")
    assert classify(original) is original
    error = classify(ConnectionRefusedError("refused"), model="openai/x")
    assert isinstance(error, LMCallError) and error.code == "lm_unreachable"
    assert error.message.startswith("openai/x: ")
    assert failure_code(TimeoutError()) == "lm_timeout"
    assert failure_code(RuntimeError("boom")) == "lm_error"


def test_list_models(lm_server: FakeLMServer, fake_profile: LMProfile) -> None:
    assert list_models(fake_profile) == ["fake-model"]
    assert list_models(fake_profile.model_copy(update={"api_key": None})) == ["fake-model"]


def test_list_models_errors(lm_server: FakeLMServer, closed_port: int) -> None:
    with pytest.raises(FleetError) as info:
        list_models(LMProfile(name="claude", model="anthropic/claude-3-5-sonnet-20240620"))
    assert info.value.code == "models_not_listable" and info.value.action
    with pytest.raises(LMCallError) as down:
        list_models(LMProfile(name="down", model="openai/x", api_base=f"http://127.0.0.1:{closed_port}/v1"))
    assert down.value.code == "lm_unreachable"
    with pytest.raises(FleetError) as wrong:
        list_models(LMProfile(name="root", model="openai/x", api_base=lm_server.url + "/nowhere"))
    assert wrong.value.code == "models_not_listable"
