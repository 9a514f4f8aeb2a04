"""`run`, `sessions`, `auth token` and `doctor` through the console scripts; output parses, exit codes are right."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import SecretStr
from typer.testing import CliRunner

from fleet_rlm.api.auth.tokens import verify_token
from fleet_rlm.cli.main import build_fleet_rlm_app
from tests.cli.helpers import cli_env, run_cli
from tests.cli.scripted import scripted_server


def test_run_json_and_exit_codes(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    context = tmp_path / "data.csv"
    context.write_text("a,b\n1,2\n", encoding="utf-8")
    env = cli_env(tmp_path / "cli")
    with scripted_server(settings) as (url, runtime):
        ok = run_cli("fleet-rlm", ["run", "sum it", "--json", "--context", str(context), "--url-server", url], env)
        plain = run_cli("fleet-rlm", ["run", "-", "--mode", "rlm", "--url-server", url], env, stdin="from stdin")
        failed = run_cli("fleet-rlm", ["run", "fail please", "--json", "--url-server", url], env)
        listed = run_cli("fleet-rlm", ["sessions", "list", "--json", "--url-server", url], env)
    assert ok.returncode == 0, ok
    outcome = json.loads(ok.stdout)
    assert outcome["status"] == "succeeded" and outcome["answer"] == "answer 1: sum it"
    assert outcome["usage"]["lm_calls"] == 4 and outcome["run_id"] and outcome["session_id"]
    assert "sub-LM batch" in ok.stderr  # progress goes to stderr
    assert [s.name for s in runtime.requests[0].sources if s.kind == "file"] == ["data.csv"]
    assert plain.returncode == 0 and plain.stdout == "answer 1: from stdin\n", plain
    assert runtime.requests[1].options.execution_mode == "rlm"
    assert failed.returncode == 1
    failure = json.loads(failed.stdout)
    assert failure["status"] == "failed" and failure["error"]["code"] == "lm_auth_failed"
    titles = {item["title"] for item in json.loads(listed.stdout)["items"]}
    assert titles == {"sum it", "from stdin", "fail please"}


def test_run_without_a_model_explains_and_exits_2(tmp_path: Path) -> None:
    result = run_cli("fleet-rlm", ["run", "anything"], cli_env(tmp_path / "cli"))
    assert result.returncode == 2
    assert "DSPY_LM_MODEL" in result.stderr and "DSPY_LLM_API_KEY" in result.stderr and ".env" in result.stderr
    assert result.stdout == "" and not (tmp_path / "cli").exists()  # nothing was started or created


def test_bad_options_are_usage_errors() -> None:
    app = build_fleet_rlm_app()
    for args in (["run", "x", "--mode", "fast"], ["chat", "--ref", "main"], ["doctor", "everything"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output


def test_sessions_show_export_delete(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = cli_env(tmp_path / "cli")
    with scripted_server(settings) as (url, _):
        made = json.loads(run_cli("fleet-rlm", ["run", "remember me", "--json", "--url-server", url], env).stdout)
        sid = made["session_id"]
        listed = run_cli("fleet-rlm", ["sessions", "list", "--url-server", url], env)
        shown = run_cli("fleet-rlm", ["sessions", "show", sid, "--url-server", url], env)
        exported = run_cli(
            "fleet-rlm", ["sessions", "export", sid, "-o", str(tmp_path / "x.json"), "--url-server", url], env
        )
        deleted = run_cli("fleet-rlm", ["sessions", "delete", sid, "--yes", "--url-server", url], env)
        gone = run_cli("fleet-rlm", ["sessions", "show", sid, "--url-server", url], env)
    assert sid in listed.stdout and "remember me" in listed.stdout
    assert "you: remember me" in shown.stdout and "fleet: answer 1: remember me" in shown.stdout
    assert exported.returncode == 0
    bundle = json.loads((tmp_path / "x.json").read_text(encoding="utf-8"))
    assert bundle["session"]["id"] == sid and bundle["turns"][0]["answer"] == "answer 1: remember me"
    assert any(event["type"] == "final" for event in bundle["events"])
    assert deleted.returncode == 0 and f"deleted session {sid}" in deleted.stdout
    assert gone.returncode == 1 and gone.stderr.startswith("error[not_found]")


def test_sessions_list_in_process_shares_the_data_dir(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A session made through one server shows up in the embedded one started on the same data dir."""
    with scripted_server(settings) as (url, _):
        run_cli("fleet-rlm", ["run", "made remotely", "--url-server", url], cli_env(tmp_path / "cli"))
    env = cli_env(settings.data_dir, FLEET_DATABASE_URL=settings.resolved_database_url, FLEET_SANDBOX_POOL_SIZE="0")
    listed = run_cli("fleet-rlm", ["sessions", "list"], env)
    assert listed.returncode == 0, listed
    assert "made remotely" in listed.stdout


def test_auth_token(tmp_path: Path) -> None:
    secret = "k" * 40
    minted = run_cli(
        "fleet-rlm", ["auth", "token", "--user", "alice", "--ttl", "60"], cli_env(tmp_path, FLEET_JWT_SECRET=secret)
    )
    assert minted.returncode == 0, minted
    from fleet_rlm.config import Settings

    claims = verify_token(Settings(_env_file=None, jwt_secret=SecretStr(secret)), minted.stdout.strip())  # type: ignore[call-arg]
    assert claims["sub"] == "alice" and claims["exp"] - claims["iat"] == 60
    unset = run_cli("fleet-rlm", ["auth", "token", "--user", "alice"], cli_env(tmp_path))
    assert unset.returncode == 1 and unset.stderr.startswith("error[auth_misconfigured]")
    assert len(unset.stderr.strip().splitlines()) == 1


def test_doctor_reports_each_check_with_its_action(tmp_path: Path) -> None:
    from fleet_rlm.testing import FakeLMServer

    env = cli_env(tmp_path / "data")
    db = run_cli("fleet-rlm", ["doctor", "db"], env)
    assert db.returncode == 0 and "✓ db" in db.stdout, db
    no_model = run_cli("fleet-rlm", ["doctor", "lm"], env)
    assert no_model.returncode == 1 and "✗ lm" in no_model.stdout and "DSPY_LM_MODEL" in no_model.stdout
    daytona = run_cli("fleet-rlm", ["doctor", "daytona"], env)
    assert daytona.returncode == 0 and "not configured" in daytona.stdout  # skipped, not failed
    with FakeLMServer(["OK"]) as lm:
        configured = {"DSPY_LM_MODEL": "openai/fake-model", "DSPY_LM_API_BASE": lm.base_url, "DSPY_LLM_API_KEY": "x"}
        model = run_cli("fleet-rlm", ["doctor", "lm"], {**env, **configured})
    assert model.returncode == 0 and "✓ lm" in model.stdout, model
    broken = run_cli("fleet-rlm", ["doctor", "lm"], {**env, **configured, "DSPY_LM_API_BASE": "http://127.0.0.1:9/v1"})
    assert broken.returncode == 1 and "✗ lm" in broken.stdout and "→" in broken.stdout, broken
