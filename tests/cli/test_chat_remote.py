"""The chat through its real entry point (`fleet-rlm chat --url-server`) with scripted stdin.

The server is the real app (routes, store, SSE, cancellation) with a scripted turn runtime (tests/cli/scripted.py).
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from fleet_rlm.cli.client import FleetClient, StreamState
from tests.cli.helpers import BIN, cli_env, run_cli, wait_for
from tests.cli.scripted import scripted_server


def test_chat_streams_turns_and_runs_slash_commands(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    notes = tmp_path / "notes.txt"
    notes.write_text("some notes", encoding="utf-8")
    stdin = "\n".join(
        [
            "hello there",
            "/help",
            "/mode bogus",
            "/mode direct",
            "/bogus",
            "/resume",
            "/attach missing.txt",
            f"/attach {notes}",
            "/url ftp://nope",
            "/memory",
            "/artifacts",
            "/sessions",
            "second \\",
            "line",
            "/export out.json",
            "/exit",
            "never sent",
        ]
    )
    with scripted_server(settings) as (url, runtime):
        result = run_cli(
            "fleet-rlm", ["chat", "--url-server", url], cli_env(tmp_path / "cli"), stdin=stdin, cwd=tmp_path
        )
    out = result.stdout
    assert result.returncode == 0, result
    assert "Traceback" not in out + result.stderr
    assert "answer 1: hello there" in out
    assert "┌ child c1 (depth 1): summarise part one" in out and "sub-LM batch: 2/2 done" in out
    assert "tokens 120 in / 30 out" in out
    assert "Alt-Enter" in out and "/resume ID" in out  # /help
    assert "usage: /mode auto|direct|tools|rlm" in out
    assert "unknown command /bogus; type /help for the list" in out
    assert "usage: /resume ID" in out
    assert "error[file_not_found]: no such file: missing.txt" in out
    assert "attached notes.txt" in out
    assert "error[context_url_blocked]" in out  # checked when entered (cli/targets.py)
    assert "Memories" in out or "no memories yet" in out  # the workspace's memory file, or a hint
    assert "no artifacts in this session" in out
    assert "answer 2: second \nline" in out or "answer 2: second" in out
    assert "never sent" not in out
    assert [r.task for r in runtime.requests] == ["hello there", "second \nline"]
    second = runtime.requests[1]
    assert second.options.execution_mode == "direct"
    assert [source.name for source in second.sources if source.kind == "file"] == ["notes.txt"]
    exported = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert [turn["user_message"] for turn in exported["turns"]] == ["hello there", "second \nline"]


def test_resume_continues_a_session_created_through_the_api(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with scripted_server(settings) as (url, runtime):
        with FleetClient(url) as client:
            session = client.create_session(title="made by the API")
            events = list(client.start_turn(session["id"], {"content": "first"}, StreamState()))
            assert events[-1].type == "turn_finished"
        env = cli_env(tmp_path / "cli")
        by_option = run_cli("fleet-rlm", ["chat", "--url-server", url, "--session", session["id"]], env, stdin="next")
        by_command = run_cli("fleet-rlm", ["chat", "--url-server", url], env, stdin=f"/resume {session['id']}\nthird")
        missing = run_cli("fleet-rlm", ["chat", "--url-server", url], env, stdin="/resume nosuchsession")
    assert by_option.returncode == 0, by_option
    assert "made by the API" in by_option.stdout and "fleet: answer 1: first" in by_option.stdout
    assert "answer 2: next" in by_option.stdout
    assert "answer 3: third" in by_command.stdout, by_command.stdout
    assert [len(r.history) for r in runtime.requests] == [0, 1, 2]
    assert "error[not_found]" in missing.stdout and missing.returncode == 0


def test_ctrl_c_mid_turn_cancels_and_the_next_prompt_works(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with scripted_server(settings) as (url, runtime):
        child = subprocess.Popen(
            [str(BIN / "fleet-rlm"), "chat", "--url-server", url],
            env=cli_env(tmp_path / "cli"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert child.stdin is not None
            child.stdin.write("slow task\n")
            child.stdin.flush()
            wait_for(runtime.started.is_set, what="the slow turn to start")
            child.send_signal(signal.SIGINT)
            out, err = child.communicate("after cancel\n", timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
    assert child.returncode == 0, (out, err)
    assert "cancelling the turn" in out and "turn cancelled" in out, out
    assert "answer 1: after cancel" in out  # the cancelled turn has no answer, so it is not history
    assert "Traceback" not in out + err


def test_chat_uses_fleet_token_against_a_token_server(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from pydantic import SecretStr

    from fleet_rlm.api.auth.tokens import mint_token

    secured = settings.model_copy(update={"auth_mode": "token", "jwt_secret": SecretStr("s" * 40)})
    with scripted_server(secured) as (url, _):
        env = cli_env(tmp_path / "cli")
        refused = run_cli("fleet-rlm", ["chat", "--url-server", url], env, stdin="hi")
        token = mint_token(secured, "alice", 600)
        accepted = run_cli("fleet-rlm", ["chat", "--url-server", url], {**env, "FLEET_TOKEN": token}, stdin="hi")
    assert refused.returncode == 1 and refused.stderr.startswith("error[unauthorized]"), refused
    assert len(refused.stderr.strip().splitlines()) == 1
    assert accepted.returncode == 0 and "answer 1: hi" in accepted.stdout, accepted


def test_resuming_shows_a_failed_turn_as_failed(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A failed earlier turn reads as failed, with its error, in the chat's resume and in `sessions show`."""
    with scripted_server(settings) as (url, _):
        with FleetClient(url) as client:
            session = client.create_session(title="one failure")
            assert list(client.start_turn(session["id"], {"content": "fail please"}, StreamState()))[-1].type == (
                "turn_failed"
            )
            assert list(client.start_turn(session["id"], {"content": "then work"}, StreamState()))[-1].type == (
                "turn_finished"
            )
            ended = client.get_session(session["id"])["last_run_id"]
            assert client.cancel_run(ended) is None  # an ended run: nothing to stop, said without an error
        env = cli_env(tmp_path / "cli")
        resumed = run_cli("fleet-rlm", ["chat", "--url-server", url, "--session", session["id"]], env, stdin="")
        shown = run_cli("fleet-rlm", ["sessions", "show", session["id"], "--url-server", url], env)
    for out in (resumed.stdout, shown.stdout):
        lines = [line.strip() for line in out.splitlines()]
        at = lines.index("you: fail please")
        assert lines[at + 1] == "fleet: failed error[lm_auth_failed]: bad key", out
        assert "fleet: answer 1: then work" in out  # a failed turn is not part of the next turn's history
