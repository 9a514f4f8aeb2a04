"""A `fleet-rlm serve-api` subprocess for reliability tests: start (wait for /ready), kill -9, SIGTERM, stop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_env(database_url: str, data_dir: Path, lm_model: str, lm_base: str, **settings: str) -> dict[str, str]:
    """The test process's environment without any FLEET_/DSPY_/OPENAI_ variable, plus a server on `database_url`
    and `data_dir` using the fake LM at `lm_base` (no pool, no LM retries), plus `settings`."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FLEET_", "DSPY_", "OPENAI_"))}
    env.update(
        FLEET_DATABASE_URL=database_url,
        FLEET_DATA_DIR=str(data_dir),
        FLEET_SANDBOX_POOL_SIZE="0",
        FLEET_LM_NUM_RETRIES="0",
        DSPY_LM_MODEL=lm_model,
        DSPY_LM_API_BASE=lm_base,
        DSPY_LLM_API_KEY="fake",
    )
    env.update(settings)
    return env


class ServerProcess:
    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log, self.port = env, log, _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        handle = self.log.open("ab")
        self.process = subprocess.Popen(
            [str(BIN / "fleet-rlm"), "serve-api", "--port", str(self.port)],
            env=self.env,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()
            try:
                if httpx.get(f"{self.base}/ready", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"server never became ready:\n{self.log.read_text()}")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def terminate(self) -> None:
        """SIGTERM, as a service manager sends it: the server stops gracefully on its own."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
