"""Settings: sources, precedence, the DSPY_* names, and the policy file's refusal of secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_rlm.config import ConfigError, Settings, load_settings

pytestmark = pytest.mark.db_independent


def test_defaults_use_sqlite_in_the_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FLEET_DATA_DIR", str(tmp_path / "d"))
    settings = load_settings()
    assert settings.resolved_database_url == f"sqlite+aiosqlite:///{tmp_path / 'd' / 'fleet.db'}"
    assert settings.database_kind == "sqlite"
    assert settings.sandbox_backend == "local"
    assert settings.host == "127.0.0.1" and settings.port == 8000
    assert not settings.model_configured


def test_home_is_expanded_in_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert load_settings().data_dir == tmp_path / ".fleet-rlm"


def test_dspy_environment_names_configure_models(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSPY_LM_MODEL", "openai/gpt-4o-mini")
    monkeypatch.setenv("DSPY_LLM_API_KEY", "sk-test-root")
    monkeypatch.setenv("DSPY_LM_API_BASE", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("DSPY_DELEGATE_LM_MODEL", "openai/gpt-4o-nano")
    monkeypatch.setenv("DSPY_DELEGATE_LM_API_KEY", "sk-test-sub")
    settings = load_settings()
    assert settings.lm_model == "openai/gpt-4o-mini"
    assert settings.lm_api_key is not None and settings.lm_api_key.get_secret_value() == "sk-test-root"
    assert settings.lm_api_base == "http://127.0.0.1:9/v1"
    assert settings.delegate_lm_model == "openai/gpt-4o-nano"
    assert "sk-test-root" not in repr(settings)
    assert settings.model_configured


def test_dotenv_in_working_directory_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("FLEET_PORT=9123\nDSPY_LM_MODEL=openai/from-dotenv\n")
    settings = load_settings()
    assert settings.port == 9123
    assert settings.lm_model == "openai/from-dotenv"


def test_policy_file_tables_map_to_flat_fields(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "fleet.toml").write_text(
        'default_mode = "rlm"\n[sandbox]\nmemory_mb = 2048\nbackend = "local"\n'
    )
    settings = load_settings()
    assert settings.default_mode == "rlm"
    assert settings.sandbox_memory_mb == 2048


def test_environment_beats_policy_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("max_depth = 4\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FLEET_CONFIG", str(policy))
    monkeypatch.setenv("FLEET_MAX_DEPTH", "1")
    assert load_settings().max_depth == 1


def test_policy_file_refuses_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('[lm]\napi_key = "sk-leak"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FLEET_CONFIG", str(policy))
    with pytest.raises(ConfigError, match="secret; set it in the environment"):
        load_settings()


def test_policy_file_refuses_unknown_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("[sandbox]\nmemroy_mb = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FLEET_CONFIG", str(policy))
    with pytest.raises(ConfigError, match="unknown setting 'sandbox_memroy_mb'"):
        load_settings()


def test_missing_policy_file_named_explicitly_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FLEET_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(ConfigError, match="not a file"):
        load_settings()


def test_invalid_value_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FLEET_PORT", "not-a-port")
    with pytest.raises(ConfigError) as excinfo:
        load_settings()
    assert "port" in str(excinfo.value) and "\n" not in str(excinfo.value)


def test_postgres_url_sets_kind() -> None:
    settings = Settings(_env_file=None, database_url="postgresql+asyncpg://u@h/db")  # type: ignore[call-arg]
    assert settings.database_kind == "postgresql"


def test_shipped_examples_are_valid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(__file__).resolve().parent.parent
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FLEET_CONFIG", str(root / "config" / "fleet.example.toml"))
    assert load_settings().sandbox_memory_mb == 1024
    documented = set(Settings.model_fields) | {"DSPY_LLM_API_KEY"}
    for line in (root / ".env.example").read_text().splitlines():
        name = line.lstrip("# ").split("=", 1)[0]
        if "=" in line and name.isupper():
            field = name.removeprefix("FLEET_").lower()
            known = field in documented or name in documented or name.startswith(("DSPY_", "DAYTONA_"))
            assert known, f".env.example names unknown setting {name}"
