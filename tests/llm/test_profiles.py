"""Role resolution: environment defaults, fallbacks, stored profiles and bindings, clear errors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from fleet_rlm.config import Settings
from fleet_rlm.llm import (
    ROLES,
    LMProfile,
    ModelNotConfigured,
    ProfileNotFound,
    RoleBinding,
    explain_profiles,
    fallback_chain,
    parse_role,
    resolve_profile,
    resolve_profiles,
)


def make_settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path, **values)  # type: ignore[arg-type]


def test_root_only_fills_every_role(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, lm_model="openai/gpt-4o", lm_api_key="sk-root", lm_api_base="http://x/v1")
    profiles = resolve_profiles(settings)
    assert set(profiles) == set(ROLES)
    assert {p.model for p in profiles.values()} == {"openai/gpt-4o"}
    assert profiles["sub"].api_key_value == "sk-root"
    assert profiles["router"].api_base == "http://x/v1"


def test_delegate_env_serves_sub_delegate_and_router_and_inherits_credentials(tmp_path: Path) -> None:
    settings = make_settings(
        tmp_path, lm_model="openai/gpt-4o", lm_api_key="sk-root", delegate_lm_model="openai/gpt-4o-mini"
    )
    profiles = resolve_profiles(settings)
    assert profiles["root"].model == "openai/gpt-4o"
    assert profiles["reflection"].model == "openai/gpt-4o"
    for role in ("sub", "delegate", "router"):
        assert profiles[role].model == "openai/gpt-4o-mini"
        assert profiles[role].name == "env-delegate"
        assert profiles[role].api_key_value == "sk-root"


def test_delegate_env_with_its_own_endpoint(tmp_path: Path) -> None:
    settings = make_settings(
        tmp_path,
        lm_model="openai/gpt-4o",
        lm_api_key="sk-root",
        delegate_lm_model="openai/local",
        delegate_lm_api_key="sk-sub",
        delegate_lm_api_base="http://local:8000/v1/",
    )
    sub = resolve_profile("sub", settings)
    assert (sub.api_key_value, sub.api_base) == ("sk-sub", "http://local:8000/v1")


def test_env_aliases_users_know(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSPY_LM_MODEL", "openai/gpt-4o")
    monkeypatch.setenv("DSPY_LLM_API_KEY", "sk-env")
    monkeypatch.setenv("DSPY_DELEGATE_LM_MODEL", "openai/gpt-4o-mini")
    profiles = resolve_profiles(make_settings(tmp_path))
    assert profiles["root"].api_key_value == "sk-env"
    assert profiles["sub"].model == "openai/gpt-4o-mini"


def test_nothing_configured_says_what_to_set(tmp_path: Path) -> None:
    with pytest.raises(ModelNotConfigured) as info:
        resolve_profiles(make_settings(tmp_path))
    error = info.value
    assert error.code == "model_not_configured"
    assert error.action is not None
    for name in ("DSPY_LM_MODEL", "DSPY_LLM_API_KEY", "DSPY_LM_API_BASE", "fleet-rlm profiles add"):
        assert name in error.action
    assert error.details == {"role": "root"}


@dataclass
class StoredRow:
    """What a database row looks like to this layer: just attributes."""

    name: str
    model: str
    api_base: str | None = None
    api_key: str | None = None


def test_bindings_to_stored_profiles_with_fallbacks(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, lm_model="openai/gpt-4o")
    stored = [
        StoredRow(name="cheap", model="openai/gpt-4o-mini", api_key="sk-cheap"),
        {"name": "judge", "model": "anthropic/claude-3-5-sonnet-20240620", "temperature": 1.0},
    ]
    profiles = resolve_profiles(
        settings, stored_profiles=stored, bindings={"sub": "cheap", "reflection": RoleBinding(profile="judge")}
    )
    assert profiles["root"].name == "env"
    assert profiles["sub"].name == "cheap" and profiles["sub"].api_key_value == "sk-cheap"
    assert profiles["delegate"].name == "cheap"  # delegate -> sub
    assert profiles["router"].name == "cheap"  # router -> sub
    assert profiles["reflection"].name == "judge" and profiles["reflection"].temperature == 1.0


def test_binding_overrides_env_delegate_and_model(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, lm_model="openai/gpt-4o", delegate_lm_model="openai/gpt-4o-mini")
    root_profile = LMProfile(name="main", model="openai/gpt-4.1", api_key=SecretStr("sk-main"))
    profiles = resolve_profiles(
        settings,
        stored_profiles=[root_profile],
        bindings={"root": "main", "router": {"model": "openai/gpt-4.1-nano"}, "delegate": {"profile": "main"}},
    )
    assert profiles["root"] == root_profile
    assert profiles["sub"].name == "env-delegate"
    assert profiles["delegate"].name == "main"
    assert profiles["router"].name == "env-delegate" and profiles["router"].model == "openai/gpt-4.1-nano"


def test_stored_profile_can_configure_root_without_env(tmp_path: Path) -> None:
    profiles = resolve_profiles(
        make_settings(tmp_path),
        stored_profiles=[LMProfile(name="p", model="openai/gpt-4o")],
        bindings={"root": "p"},
    )
    assert profiles["sub"].name == "p"


def test_binding_to_missing_profile(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, lm_model="openai/gpt-4o")
    with pytest.raises(ProfileNotFound) as info:
        resolve_profiles(settings, bindings={"sub": "ghost"})
    assert info.value.code == "profile_not_found"
    assert "ghost" in info.value.message and info.value.details == {"role": "sub", "profile": "ghost"}


def test_explain_reports_each_roles_source_and_problems_per_role(tmp_path: Path) -> None:
    """The same resolution turns use, with its reasons: problems stay on their role instead of raising."""
    settings = make_settings(tmp_path, lm_model="openai/gpt-4o")
    stored = [LMProfile(name="cheap", model="openai/gpt-4o-mini")]
    found = explain_profiles(
        settings, stored_profiles=stored, bindings={"sub": {"profile": "cheap", "model": "x/y"}, "reflection": "ghost"}
    )
    assert (found["root"].source, found["root"].base, found["root"].reason) == (
        "env",
        "env",
        "no binding; the server environment's DSPY_LM_MODEL",
    )
    assert found["sub"].source == "binding" and found["sub"].profile is not None
    assert (
        found["sub"].profile.model == "x/y"
        and found["sub"].reason == "bound to profile 'cheap', model overridden to x/y"
    )
    assert (found["delegate"].source, found["delegate"].base) == ("fallback", "cheap")
    assert found["delegate"].reason == "no binding; uses the sub role's model"
    assert found["reflection"].profile is None and isinstance(found["reflection"].error, ProfileNotFound)
    nothing = explain_profiles(make_settings(tmp_path))
    assert all(isinstance(r.error, ModelNotConfigured) for r in nothing.values())


def test_profile_validation() -> None:
    with pytest.raises(ValidationError, match="extra may not set"):
        LMProfile(name="p", model="openai/x", extra={"api_key": "sk"})
    with pytest.raises(ValidationError):
        LMProfile(name="p", model="")
    profile = LMProfile(name="p", model="openai/x", api_key="sk-secret", api_base=" http://h/v1/ ")
    assert profile.api_base == "http://h/v1"
    assert "sk-secret" not in repr(profile) and "sk-secret" not in profile.model_dump_json()


def test_roles_and_fallback_chain() -> None:
    assert fallback_chain("router") == ["router", "sub", "root"]
    assert fallback_chain("delegate") == ["delegate", "sub", "root"]
    assert fallback_chain("reflection") == ["reflection", "root"]
    assert parse_role("sub") == "sub"
    with pytest.raises(ValueError, match="roles are: root, sub"):
        parse_role("boss")
