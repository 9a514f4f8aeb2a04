"""`fleet-rlm profiles`: import from the environment, list, add with a key from an env var, test — via the API."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_rlm.testing import FakeLMServer, adapter_fields_rule
from tests.cli.helpers import cli_env, run_cli

pytestmark = pytest.mark.db_independent


def test_profiles_round_trip(tmp_path: Path) -> None:
    with FakeLMServer(rule=adapter_fields_rule()) as lm:
        env = cli_env(
            tmp_path / "data",
            DSPY_LM_MODEL=lm.model,
            DSPY_LM_API_BASE=lm.base_url,
            DSPY_LLM_API_KEY="sk-env-secret-1234",
            MY_KEY="sk-added-secret-9876",
        )
        imported = run_cli("fleet-rlm", ["profiles", "import-env"], env)
        assert imported.returncode == 0, imported.stderr
        assert "created: env" in imported.stdout

        added = run_cli(
            "fleet-rlm",
            ["profiles", "add", "second", "--model", lm.model, "--api-base", lm.base_url, "--api-key-env", "MY_KEY"],
            env,
        )
        assert added.returncode == 0, added.stderr
        assert "9876" in added.stdout and "sk-added-secret" not in added.stdout

        listed = run_cli("fleet-rlm", ["profiles", "list"], env)
        assert listed.returncode == 0 and "second" in listed.stdout and "env" in listed.stdout
        assert "sk-env-secret" not in listed.stdout

        tested = run_cli("fleet-rlm", ["profiles", "test", "second"], env)
        assert tested.returncode == 0, tested.stderr
        assert tested.stdout.startswith("ok:")

        missing = run_cli("fleet-rlm", ["profiles", "test", "nope"], env)
        assert missing.returncode == 1 and "Traceback" not in missing.stderr
        assert missing.stderr.strip().startswith("error[profile_not_found]")

        no_key = run_cli("fleet-rlm", ["profiles", "add", "third", "--model", "m", "--api-key-env", "UNSET_VAR"], env)
        assert no_key.returncode == 1 and "error[api_key_missing]" in no_key.stderr
