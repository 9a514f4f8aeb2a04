"""kill -9 of a `fleet-rlm serve-api` process mid-turn (turns in its worker processes, the default), then a restart
on the same data dir and database: the turn is resumed from its last completed iteration and finishes. The fake
LM sees no request twice (its request log), the variables defined before the kill are there, and the run's event
log stays gap-free with one terminal event."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fleet_rlm.testing import FakeLMServer
from tests.reliability.server_process import ServerProcess, _free_port, server_env
from tests.security.harness import CellScript, new_session

pytestmark = pytest.mark.slow

DEFINE = "data = {'k': [1, 2, 3], 't': (4, 'five')}\ncount = 41\nprint('defined')"
SLOW_ONCE = (
    "import os, time\n"
    "marker = os.path.join(MEMORY_DIR, 'slow-started')\n"
    "if not os.path.exists(marker):\n"
    "    open(marker, 'w').close()\n"
    "    print('slow', flush=True)\n"
    "    time.sleep(120)\n"
    "count += 1\n"
    "print('after restart', data['t'][1], count)"
)


@pytest.fixture
def script() -> Iterator[tuple[CellScript, FakeLMServer]]:
    cells = CellScript()
    with FakeLMServer(rule=cells) as lm:
        yield cells, lm


def _events(http: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    return list(http.get(f"/api/v1/runs/{run_id}/events", params={"limit": 500}).json()["items"])


def test_kill_9_mid_turn_resumes_from_the_last_iteration(
    tmp_path: Path, database_url: str, script: tuple[CellScript, FakeLMServer]
) -> None:
    cells, lm = script
    env = server_env(
        database_url, tmp_path / "data", lm.model, lm.base_url, FLEET_RUN_HEARTBEAT_S="0.5", FLEET_RUN_STALE_AFTER_S="3"
    )
    server = ServerProcess(env, tmp_path / "server.log")
    server.start()
    started: dict[str, Any] = {}
    try:
        with httpx.Client(base_url=server.base, timeout=60) as http:
            session_id = new_session(http)

            def drive() -> None:
                body = {"content": cells.register("resume", DEFINE, SLOW_ONCE), "execution_mode": "rlm"}
                try:
                    with httpx.stream(
                        "POST",
                        f"{server.base}/api/v1/sessions/{session_id}/turns",
                        json=body,
                        headers={"Idempotency-Key": uuid.uuid4().hex},
                        timeout=120,
                    ) as response:
                        started["run_id"] = response.headers["X-Run-Id"]
                        for chunk in response.iter_text():
                            if "slow-started" in chunk:
                                started["slow"] = True
                except httpx.HTTPError:
                    started["cut"] = True

            driver = threading.Thread(target=drive, daemon=True)
            driver.start()
            deadline = time.monotonic() + 60
            while "slow" not in started and time.monotonic() < deadline:
                time.sleep(0.05)
            assert "slow" in started, "the slow cell never started"
            run_id = started["run_id"]
            # the first iteration's snapshot rides the event writer's group commit: wait until it is stored
            while time.monotonic() < deadline:
                if any(e["type"] == "repl_variables" for e in _events(http, run_id)):
                    break
                time.sleep(0.05)
            time.sleep(0.5)
            requests_before = [r.text for r in lm.requests]
            server.kill()
            driver.join(timeout=30)
        server.port = _free_port()
        server.start()
        with httpx.Client(base_url=server.base, timeout=60) as http:
            deadline = time.monotonic() + 90
            run = http.get(f"/api/v1/runs/{run_id}").json()
            while run["status"] in ("running", "queued") and time.monotonic() < deadline:
                time.sleep(0.3)
                run = http.get(f"/api/v1/runs/{run_id}").json()
            events = _events(http, run_id)
            assert run["status"] == "succeeded", (run, events[-5:], (tmp_path / "server.log").read_text()[-3000:])
            assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
            assert [e["type"] for e in events].count("turn_finished") == 1
            (restored,) = [e for e in events if e["type"] == "repl_restored"]
            assert restored["source"] == "resume" and restored["source_iteration"] == 1
            assert {"data", "count"} <= set(restored["restored"])
            outputs = [e["text"] for e in events if e["type"] == "output"]
            assert any("after restart five 42" in text for text in outputs), outputs
            texts = [r.text for r in lm.requests]
            assert len(texts) > len(requests_before)  # the resumed run went on live (its SUBMIT step)
            assert len(set(texts)) == len(texts), "an LM request was sent twice"
    finally:
        server.stop()
