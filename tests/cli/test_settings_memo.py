"""The CLI's settings memo: a repeated call skips the settings model, and any change to an input is seen at once
(environment, `.env`, the policy file); bad settings are refused on every call, never remembered."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from fleet_rlm.cli.settings_memo import ENV_PREFIXES
from fleet_rlm.config import Settings, env_names
from fleet_rlm.testing import FakeLMServer, adapter_fields_rule
from tests.cli.helpers import cli_env, run_cli
from tests.cli.test_import_cost import _probe

pytestmark = pytest.mark.db_independent

NO_MODEL = "No language model is configured"


def test_every_settings_variable_is_an_input_of_the_memo() -> None:
    names = [name for field in Settings.model_fields for name in env_names(field)]
    assert names and all(name.upper().startswith(ENV_PREFIXES) for name in names), names


def test_a_repeated_call_skips_the_settings_model_and_the_memo_is_private(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "data")
    first, _ = _probe(["sessions", "list"], env)
    second, _ = _probe(["sessions", "list"], env)
    assert "pydantic_settings" in first and "pydantic_settings" not in second, (first, second)
    memo = tmp_path / "xdg-cache" / "fleet-rlm" / "cli-settings.json"
    assert stat.S_IMODE(memo.stat().st_mode) == 0o600
    assert all(set(entry) >= {"data_dir", "fingerprint"} for entry in json.loads(memo.read_text()).values())
    changed, _ = _probe(["sessions", "list"], {**env, "FLEET_MAX_ITERS": "7"})  # another input: a full load
    assert "pydantic_settings" in changed


def test_dotenv_and_policy_file_changes_are_seen_by_the_next_call(tmp_path: Path) -> None:
    work = tmp_path / "project"
    work.mkdir()
    env = cli_env(tmp_path / "data", FLEET_SANDBOX_POOL_SIZE="0")
    with FakeLMServer(rule=adapter_fields_rule(answer="four")) as lm:
        before = run_cli("fleet-rlm", ["run", "2+2?", "--mode", "direct"], env, cwd=work)
        assert before.returncode == 2 and NO_MODEL in before.stderr, before
        (work / ".env").write_text(
            f"DSPY_LM_MODEL=openai/fake-model\nDSPY_LM_API_BASE={lm.base_url}\nDSPY_LLM_API_KEY=fake\n"
        )
        after = run_cli("fleet-rlm", ["run", "2+2?", "--mode", "direct"], env, cwd=work)
        assert after.returncode == 0 and after.stdout.strip() == "four", after
    (work / "config").mkdir()
    (work / "config" / "fleet.toml").write_text("[sandbox]\nbackend = 'nowhere'\n")
    for _ in range(2):  # refused each time: a bad input is never remembered
        bad = run_cli("fleet-rlm", ["sessions", "list"], env, cwd=work)
        assert bad.returncode == 1 and "error[config_invalid]" in bad.stderr, bad
        assert "Traceback" not in bad.stderr
