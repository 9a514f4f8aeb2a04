"""Two `fleet-rlm serve-api` processes on one Postgres: events and cancels cross between replicas."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from fleet_rlm.testing import FakeLMServer, adapter_fields_rule, rlm_step
from tests.conftest import POSTGRES_ADMIN_URL, drop_postgres_database, make_postgres_database

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(POSTGRES_ADMIN_URL is None, reason="needs PostgreSQL (FLEET_TEST_POSTGRES_URL)"),
]
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _slow_rule() -> Any:
    auto = adapter_fields_rule(answer="never reached")

    def rule(request: Any) -> Any:
        if "`code`" in request.system_text and "`reasoning`" in request.system_text:
            return rlm_step(
                "tick", "import time\nfor i in range(400):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"
            )
        return auto(request)

    return rule


@pytest.fixture
def database() -> Iterator[str]:
    from fleet_rlm.store import migrate

    url = make_postgres_database()
    migrate.upgrade(url, "head")
    try:
        yield url
    finally:
        drop_postgres_database(url)


def _start(port: int, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    handle = log.open("wb")
    return subprocess.Popen(
        [str(BIN / "fleet-rlm"), "serve-api", "--port", str(port)], env=env, stdout=handle, stderr=subprocess.STDOUT
    )


def _wait_ready(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        try:
            if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"server at {base} never became ready:\n{log.read_text()}")


def test_events_and_cancel_cross_replicas(database: str, tmp_path: Path) -> None:
    with FakeLMServer(rule=_slow_rule()) as lm:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("FLEET_", "DSPY_"))}
        env.update(
            FLEET_DATABASE_URL=database,
            FLEET_DATA_DIR=str(tmp_path / "data"),
            FLEET_SANDBOX_POOL_SIZE="0",
            DSPY_LM_MODEL=lm.model,
            DSPY_LM_API_BASE=lm.base_url,
            DSPY_LLM_API_KEY="fake",
        )
        ports = (_free_port(), _free_port())
        logs = (tmp_path / "a.log", tmp_path / "b.log")
        servers = [_start(port, env, log) for port, log in zip(ports, logs, strict=True)]
        try:
            a, b = (f"http://127.0.0.1:{port}" for port in ports)
            for base, server, log in zip((a, b), servers, logs, strict=True):
                _wait_ready(base, server, log)
            session_id = httpx.post(f"{a}/api/v1/sessions", json={"title": "replicas"}).json()["id"]
            run_ids: list[str] = []

            def drive_turn() -> None:
                body = {"content": "tick for a while", "execution_mode": "rlm"}
                with httpx.stream(
                    "POST",
                    f"{a}/api/v1/sessions/{session_id}/turns",
                    json=body,
                    headers={"Idempotency-Key": "replica-turn"},
                    timeout=120,
                ) as response:
                    run_ids.append(response.headers["X-Run-Id"])
                    for _ in response.iter_bytes():
                        pass

            driver = threading.Thread(target=drive_turn, daemon=True)
            driver.start()
            deadline = time.monotonic() + 30
            while not run_ids and time.monotonic() < deadline:
                time.sleep(0.05)
            assert run_ids, "turn did not start on replica A"
            run_id = run_ids[0]
            seen: list[dict[str, Any]] = []
            ws_url = f"ws://127.0.0.1:{ports[1]}/api/v1/ws/execution/events?run_id={run_id}&after=0"
            with connect(ws_url, open_timeout=10) as ws:
                cancelled_at = None
                while True:
                    frame = json.loads(ws.recv(timeout=120))
                    if frame["type"] == "end":
                        break
                    event = frame["data"]
                    seen.append(event)
                    if cancelled_at is None and event["type"] == "output":
                        response = httpx.put(f"{b}/api/v1/runs/{run_id}/cancellation", timeout=10)
                        assert response.status_code == 202
                        cancelled_at = time.monotonic()
            assert cancelled_at is not None, "replica B never saw live output from replica A"
            assert seen[-1]["type"] == "turn_cancelled"
            assert time.monotonic() - cancelled_at < 10
            assert [event["seq"] for event in seen] == list(range(1, len(seen) + 1))
            assert httpx.get(f"{b}/api/v1/runs/{run_id}").json()["status"] == "cancelled"
            driver.join(timeout=120)
        finally:
            for server in servers:
                server.terminate()
            for server in servers:
                server.wait(timeout=60)
