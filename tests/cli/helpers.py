"""Running the installed console scripts (`fleet`, `fleet-rlm`) as subprocesses with a clean environment."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

BIN = Path(sys.executable).parent


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FLEET_", "DSPY_", "DAYTONA_"))}
    env.update({"FLEET_DATA_DIR": str(data_dir), "COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"})
    env["XDG_CACHE_HOME"] = str(data_dir.parent / "xdg-cache")  # the CLI's settings memo stays in the test's dir
    env["FLEET_LOCAL_SERVER_IDLE_S"] = "60"  # a local server a test forgets does not outlive the run for long
    env.update(extra)
    return env


def run_cli(
    script: str, args: list[str], env: dict[str, str], *, stdin: str = "", cwd: Path | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / script), *args], input=stdin, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def local_server_pid(data_dir: Path) -> int | None:
    try:
        return int(json.loads((data_dir / "local-server.json").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (our own child, not yet reaped) is gone for our purposes
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def stop_local_servers(root: Path) -> None:
    """SIGTERM every local server whose discovery file lies under `root`, and wait for it to exit."""
    for found in root.rglob("local-server.json"):
        pid = local_server_pid(found.parent)
        if pid is None or not pid_alive(pid):
            continue
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not pid_alive(pid), timeout=30, what=f"local server {pid} to exit")  # noqa: B023
