"""Refused input creates nothing: `fleet-rlm run` with a binary file, a blocked URL or an upload over the limit
ends with the refusal's one line and leaves no session; bench sessions are tagged and listed only with --all."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.cli.helpers import cli_env, run_cli


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _sessions(env: dict[str, str], *flags: str) -> list[dict[str, object]]:
    listed = run_cli("fleet-rlm", ["sessions", "list", "--json", *flags], env)
    assert listed.returncode == 0, listed
    return list(json.loads(listed.stdout)["items"])


@pytest.mark.db_independent
def test_refused_input_leaves_no_session_and_bench_sessions_are_hidden(tmp_path: Path) -> None:
    env = cli_env(
        tmp_path / "data",
        DSPY_LM_MODEL="openai/fake-model",
        DSPY_LM_API_BASE=f"http://127.0.0.1:{_closed_port()}/v1",
        DSPY_LLM_API_KEY="fake",
        FLEET_SANDBOX_POOL_SIZE="0",
        FLEET_LM_NUM_RETRIES="0",
        FLEET_UPLOAD_MAX_BYTES="4096",
    )
    binary = tmp_path / "photo.dat"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    big = tmp_path / "big.txt"
    big.write_text("word " * 2000)
    refusals = {
        "context_file_unsupported": ["run", "summarize", "--context", str(binary)],
        "context_url_blocked": ["run", "summarize", "--url", "http://127.0.0.1:9/private"],
        "payload_too_large": ["run", "summarize", "--context", str(big)],
    }
    for code, args in refusals.items():
        refused = run_cli("fleet-rlm", args, env)
        assert refused.returncode == 1 and f"error[{code}]" in refused.stderr, refused
        assert "Traceback" not in refused.stderr
    assert _sessions(env) == [] and _sessions(env, "--all") == []

    args = ["bench", "sniah", "--lengths", "8k", "--tasks", "1", "--mode", "direct"]
    bench = run_cli("fleet-rlm", args, env, cwd=tmp_path)  # its results file goes to cwd (and resumes from it)
    assert "Traceback" not in bench.stderr, bench
    assert _sessions(env) == []  # the bench task's session is generated: not in the default list
    generated = _sessions(env, "--all")
    assert [item["origin"] for item in generated] == ["bench"], (generated, bench.stderr[-800:])
    table = run_cli("fleet-rlm", ["sessions", "list", "--all"], env)
    assert "[bench] bench:" in table.stdout, table


def test_a_turn_the_remote_server_refuses_leaves_no_session(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The CLI cannot know a remote server's URL policy: the server refuses the turn before a run, and the
    session `run` created for it is removed again."""
    from tests.cli.scripted import scripted_server

    with scripted_server(settings) as (url, runtime):
        env = cli_env(tmp_path / "cli")
        refused = run_cli("fleet-rlm", ["run", "read it", "--url", "http://127.0.0.1:9/x", "--url-server", url], env)
        assert refused.returncode == 1 and "error[context_url_blocked]" in refused.stderr, refused
        assert "removed" in refused.stderr
        assert _sessions(env, "--all", "--url-server", url) == []
        assert runtime.requests == []
