"""The CLI's local server: started on first use, reused, replaced when stale, dead or other, stopped when idle,
and useless without the token of its 0600 discovery file. Behaviour only, never timing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
from pathlib import Path

import httpx
import pytest

from fleet_rlm.cli.local_server import TOKEN_HEADER
from fleet_rlm.testing import FakeLMServer, adapter_fields_rule
from tests.cli.helpers import BIN, cli_env, local_server_pid, pid_alive, run_cli, wait_for

pytestmark = pytest.mark.db_independent

STARTING = "starting the local server"


def _discovery(data_dir: Path) -> dict[str, object]:
    path = data_dir / "local-server.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    return dict(json.loads(path.read_text()))


def test_runs_reuse_one_server_and_a_killed_one_is_replaced(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with FakeLMServer(rule=adapter_fields_rule(answer="four")) as lm:
        env = cli_env(
            data_dir,
            DSPY_LM_MODEL="openai/fake-model",
            DSPY_LM_API_BASE=lm.base_url,
            DSPY_LLM_API_KEY="fake",
            FLEET_SANDBOX_POOL_SIZE="0",
        )
        first = run_cli("fleet-rlm", ["run", "What is 2+2?", "--mode", "direct", "--json"], env)
        pid = local_server_pid(data_dir)
        second = run_cli("fleet-rlm", ["run", "and 3+1?", "--mode", "direct", "--json"], env)
        assert first.returncode == 0 and second.returncode == 0, (first, second)
        assert json.loads(second.stdout)["answer"] == "four"
        assert STARTING in first.stderr and STARTING not in second.stderr
        assert pid is not None and local_server_pid(data_dir) == pid  # the same process answered both

        os.kill(pid, signal.SIGKILL)  # the server dies under the CLI: the next call starts a new one
        wait_for(lambda: not pid_alive(pid), what="the killed server to exit")
        third = run_cli("fleet-rlm", ["run", "again?", "--mode", "direct", "--json"], env)
        assert third.returncode == 0, third
        assert STARTING in third.stderr and "restarting" not in third.stderr
        assert local_server_pid(data_dir) not in (None, pid)

        other = {**env, "FLEET_MAX_ITERS": "7"}  # other settings: that server is asked to stop and replaced
        replaced_pid = local_server_pid(data_dir)
        listed = run_cli("fleet-rlm", ["sessions", "list", "--json"], other)
        assert listed.returncode == 0, listed
        assert "restarting the local server: the settings or the installed code changed" in listed.stderr
        assert len(json.loads(listed.stdout)["items"]) == 3  # the same data dir, whichever server reads it
        assert local_server_pid(data_dir) not in (None, replaced_pid)
        assert replaced_pid is not None and not pid_alive(replaced_pid)


def test_several_clis_at_once_share_one_server(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    env = cli_env(data_dir)
    children = [
        subprocess.Popen(
            [str(BIN / "fleet-rlm"), "sessions", "list", "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [child.communicate(timeout=240) for child in children]
    assert [child.returncode for child in children] == [0, 0, 0], outputs
    assert sum(STARTING in err for _, err in outputs) == 1  # one started it, the others waited on the lock
    assert all(json.loads(out)["items"] == [] for out, _ in outputs)
    assert local_server_pid(data_dir) is not None


def test_idle_server_stops_and_removes_its_file(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    env = cli_env(data_dir, FLEET_LOCAL_SERVER_IDLE_S="0.5")
    listed = run_cli("fleet-rlm", ["sessions", "list"], env)
    assert listed.returncode == 0, listed
    log = (data_dir / "logs" / "local-server.log").read_text()  # the file may already be gone: the pid is logged
    pid = int(log.split("local server pid ")[-1].split()[0])
    wait_for(lambda: not pid_alive(pid), timeout=60, what="the idle server to stop")
    assert not (data_dir / "local-server.json").exists()
    status = run_cli("fleet-rlm", ["local-server", "status"], env)
    assert status.returncode == 1 and "no local server" in status.stdout


def test_a_server_whose_data_dir_is_deleted_stops_once_idle(tmp_path: Path) -> None:
    """Nothing can find it any more (its discovery file went with the directory): it must not live forever."""
    data_dir = tmp_path / "data"
    env = cli_env(data_dir, FLEET_LOCAL_SERVER_IDLE_S="0.5")
    listed = run_cli("fleet-rlm", ["sessions", "list"], env)
    assert listed.returncode == 0, listed
    log = (data_dir / "logs" / "local-server.log").read_text()  # the discovery file may already be gone (0.5 s idle)
    pid = int(log.split("local server pid ")[-1].split()[0])
    shutil.rmtree(data_dir)
    wait_for(lambda: not pid_alive(pid), timeout=60, what="the server of a deleted data dir to stop")


def test_stale_discovery_file_is_replaced(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    stale = data_dir / "local-server.json"
    stale.write_text(json.dumps({"port": 9, "pid": 2**22 + 12345, "token": "old"}))
    stale.chmod(0o600)
    env = cli_env(data_dir)
    listed = run_cli("fleet-rlm", ["sessions", "list"], env)
    assert listed.returncode == 0 and "no sessions" in listed.stdout, listed
    fresh = _discovery(data_dir)
    assert fresh["pid"] != 2**22 + 12345 and fresh["token"] != "old"
    status = run_cli("fleet-rlm", ["local-server", "status"], env)
    assert status.returncode == 0 and f"pid {fresh['pid']}" in status.stdout
    stopped = run_cli("fleet-rlm", ["local-server", "stop"], env)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped
    assert not pid_alive(int(fresh["pid"]))  # type: ignore[call-overload]


def test_server_refuses_requests_without_its_token(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    assert run_cli("fleet-rlm", ["sessions", "list"], cli_env(data_dir)).returncode == 0
    found = _discovery(data_dir)
    base = f"http://127.0.0.1:{found['port']}"
    assert httpx.get(f"{base}/api/v1/sessions").status_code == 401
    refused = httpx.get(f"{base}/api/v1/sessions", headers={TOKEN_HEADER: "guess"})
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "local_token_required"
    assert httpx.post(f"{base}/_local/shutdown").status_code == 401
    allowed = httpx.get(f"{base}/api/v1/sessions", headers={TOKEN_HEADER: str(found["token"])})
    assert allowed.status_code == 200 and allowed.json()["items"] == []


@pytest.mark.parametrize(("setting", "workers"), [(None, False), ("1", True)])
def test_turns_run_in_the_servers_threads_unless_turn_processes_is_set(
    tmp_path: Path, setting: str | None, workers: bool
) -> None:
    """One user's CLI: the local server runs turns in its threads (no workers to fork at the first call);
    FLEET_TURN_PROCESSES still decides when it is set."""
    from fleet_rlm.bench.perf.measure import descendants

    data_dir = tmp_path / "data"
    with FakeLMServer(rule=adapter_fields_rule(answer="four")) as lm:
        extra = {} if setting is None else {"FLEET_TURN_PROCESSES": setting}
        env = cli_env(
            data_dir, DSPY_LM_MODEL="openai/fake-model", DSPY_LM_API_BASE=lm.base_url, DSPY_LLM_API_KEY="fake", **extra
        )
        result = run_cli("fleet-rlm", ["run", "What is 2+2?", "--mode", "direct", "--json"], env)
        assert result.returncode == 0 and json.loads(result.stdout)["answer"] == "four", result
        pid = local_server_pid(data_dir)
        assert pid is not None
        children = [Path(f"/proc/{p}/cmdline").read_bytes() for p in descendants(pid)]
        assert any(b"multiprocessing" in cmd for cmd in children) is workers
        assert run_cli("fleet-rlm", ["local-server", "stop"], env).returncode == 0
