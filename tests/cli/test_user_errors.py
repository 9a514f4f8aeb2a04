"""User errors on the default path (the local server) end as one `error[code]` line with the action: never a
traceback, and nothing left behind by a command that was refused."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.cli.helpers import cli_env, run_cli

pytestmark = pytest.mark.db_independent


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_user_errors_are_one_line_through_the_local_server(tmp_path: Path) -> None:
    env = cli_env(
        tmp_path / "data",
        DSPY_LM_MODEL="openai/fake-model",
        DSPY_LM_API_BASE=f"http://127.0.0.1:{_closed_port()}/v1",
        DSPY_LLM_API_KEY="fake",
        FLEET_SANDBOX_POOL_SIZE="0",
        FLEET_LM_NUM_RETRIES="0",
    )
    refused = run_cli("fleet-rlm", ["run", "hi", "--mode", "direct"], env)
    assert refused.returncode == 1, refused
    assert "error[lm_unreachable]" in refused.stderr and "DSPY_LM_API_BASE" in refused.stderr, refused.stderr
    assert len(refused.stderr.splitlines()) < 12, refused.stderr

    missing = run_cli("fleet-rlm", ["run", "hi", "--context", str(tmp_path / "nope.txt")], env)
    assert missing.returncode == 1 and "error[file_not_found]" in missing.stderr, missing
    listed = run_cli("fleet-rlm", ["sessions", "list", "--json"], env)
    assert len(json.loads(listed.stdout)["items"]) == 1  # the refused LM's session only: the typo created none

    elsewhere = f"http://127.0.0.1:{_closed_port()}"
    unreachable = run_cli("fleet-rlm", ["sessions", "list", "--url-server", elsewhere], env)
    assert unreachable.returncode == 1 and "error[server_unreachable]" in unreachable.stderr, unreachable
    assert "--url-server" in unreachable.stderr  # the action names what to check

    bad_mode = run_cli("fleet-rlm", ["run", "hi", "--mode", "fast"], env)
    assert bad_mode.returncode == 2 and "--mode" in bad_mode.stderr, bad_mode
    for result in (refused, missing, unreachable, bad_mode):
        assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result
