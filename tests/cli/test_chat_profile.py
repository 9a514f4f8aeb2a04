"""`/profile` in the chat: a name is checked when entered (as `/url` is), alone it shows the session's profile
and the choices, and `/profile off` clears it, so the next turn runs on the default model."""

from __future__ import annotations

from pathlib import Path

from fleet_rlm.cli.client import FleetClient
from tests.cli.helpers import cli_env, run_cli
from tests.cli.scripted import scripted_server


def test_profile_is_checked_on_entry_shown_and_cleared(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    stdin = "\n".join(["hello", "/profile nosuch", "/profile mine", "/profile", "/profile off", "/profile", "again"])
    with scripted_server(settings) as (url, runtime):
        with FleetClient(url) as client:
            made = client.request("POST", "/api/v1/llm-profiles", json={"name": "mine", "model": "openai/scripted"})
            assert made.status_code == 201, made.text
        result = run_cli("fleet-rlm", ["chat", "--url-server", url], cli_env(tmp_path / "cli"), stdin=stdin)
        with FleetClient(url) as client:
            sessions = client.get_json("/api/v1/sessions")["items"]
    out = result.stdout
    assert result.returncode == 0 and "Traceback" not in out + result.stderr, result
    assert "error[profile_not_found]: no LM profile named 'nosuch'" in out
    assert "choose one of: mine" in out and "/profile off" in out
    assert "profile: mine · yours: mine; `/profile off` goes back to the default model" in out
    assert "profile cleared: turns use the default model" in out
    assert "profile: (default model) · yours: mine" in out
    assert "answer 2: again" in out, "the turn after a refused name runs"
    assert [r.task for r in runtime.requests] == ["hello", "again"]
    assert "profile" not in sessions[0]["settings"]
