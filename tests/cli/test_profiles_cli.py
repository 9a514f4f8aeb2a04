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


def test_header_values_come_from_the_environment_and_are_never_printed(tmp_path: Path) -> None:
    org, token = "org-cli-secret-5151", "tok-cli-secret-7373"
    with FakeLMServer(rule=adapter_fields_rule()) as lm:
        env = cli_env(tmp_path / "data", ORG_VALUE=org, TOKEN_VALUE=token, NEW_TOKEN="tok-cli-rotated-9090")
        base = ["--model", lm.model, "--api-base", lm.base_url]
        added = run_cli(
            "fleet-rlm",
            ["profiles", "add", "gw", *base, "--header-env", "X-Org=ORG_VALUE", "--header-env", "X-Token=TOKEN_VALUE"],
            env,
        )
        assert added.returncode == 0, added.stderr
        assert "X-Org (set), X-Token (set)" in added.stdout

        tested = run_cli("fleet-rlm", ["profiles", "test", "gw"], env)
        assert tested.returncode == 0, tested.stderr
        assert lm.last_request is not None and lm.last_request.headers.get("x-token") == token

        changed = run_cli(
            "fleet-rlm", ["profiles", "headers", "gw", "--set-env", "X-Token=NEW_TOKEN", "--remove", "X-Org"], env
        )
        assert changed.returncode == 0, changed.stderr
        assert changed.stdout.strip() == "gw: headers: X-Token (set)"
        run_cli("fleet-rlm", ["profiles", "test", "gw"], env)
        assert (
            lm.last_request.headers.get("x-token") == "tok-cli-rotated-9090" and "x-org" not in lm.last_request.headers
        )

        listed = run_cli("fleet-rlm", ["profiles", "list"], env)
        as_json = run_cli("fleet-rlm", ["profiles", "list", "--json"], env)
        assert "X-Token (set)" in listed.stdout and '"extra_header_names": ["X-Token"]' in as_json.stdout
        missing = run_cli("fleet-rlm", ["profiles", "add", "x", "--model", "m", "--header-env", "X-A=UNSET_VAR"], env)
        assert missing.returncode == 1 and "error[header_value_missing]" in missing.stderr
        malformed = run_cli("fleet-rlm", ["profiles", "headers", "gw", "--set-env", "X-A"], env)
        assert malformed.returncode == 1 and "error[invalid_header]" in malformed.stderr
        for result in (added, tested, changed, listed, as_json, missing, malformed):
            for value in (org, token, "tok-cli-rotated"):
                assert value not in result.stdout + result.stderr
