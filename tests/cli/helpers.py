"""Running the installed console scripts (`fleet`, `fleet-rlm`) as subprocesses with a clean environment."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

BIN = Path(sys.executable).parent


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FLEET_", "DSPY_", "DAYTONA_"))}
    env.update({"FLEET_DATA_DIR": str(data_dir), "COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"})
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
