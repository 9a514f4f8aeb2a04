"""Every bash and python block in docs/api.md runs against a real server (with the fake LM) and succeeds."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fleet_rlm.testing import FakeLMServer, adapter_fields_rule

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
BLOCK = re.compile(r"```(bash|python)\n(.*?)```", re.S)
BLOCKS = BLOCK.findall((ROOT / "docs" / "api.md").read_text(encoding="utf-8"))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("api-docs")
    with FakeLMServer(rule=adapter_fields_rule(answer="42")) as lm:
        port = _free_port()
        env = {key: value for key, value in os.environ.items() if not key.startswith(("FLEET_", "DSPY_"))}
        env.update(
            FLEET_DATA_DIR=str(data / "data"),
            FLEET_SANDBOX_POOL_SIZE="0",
            DSPY_LM_MODEL=lm.model,
            DSPY_LM_API_BASE=lm.base_url,
            DSPY_LLM_API_KEY="fake",
        )
        log = (data / "server.log").open("wb")
        process = subprocess.Popen(
            [str(BIN / "fleet-rlm"), "serve-api", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 240
            while True:
                assert process.poll() is None, (data / "server.log").read_text()
                try:
                    if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "server did not become ready"
                time.sleep(0.2)
            yield base
        finally:
            process.terminate()
            process.wait(timeout=20)


def test_docs_have_examples() -> None:
    kinds = [kind for kind, _ in BLOCKS]
    assert kinds.count("bash") >= 3 and kinds.count("python") >= 2


@pytest.mark.parametrize(("kind", "source"), BLOCKS, ids=[f"{kind}-{i}" for i, (kind, _) in enumerate(BLOCKS)])
def test_example_runs(kind: str, source: str, server: str, tmp_path: Path) -> None:
    env = {**os.environ, "FLEET_URL": server}
    command = ["bash", "-euo", "pipefail", "-c", source] if kind == "bash" else [sys.executable, "-c", source]
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    if 'echo "replayed"' in source:
        assert "replayed" in result.stdout
    if "answer:" in source:
        assert "answer: 42" in result.stdout
