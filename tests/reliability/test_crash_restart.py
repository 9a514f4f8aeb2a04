"""kill -9 of a `fleet-rlm serve-api` process mid-turn, then a restart on the same data dir and database.

The running turn becomes `interrupted` with a turn_interrupted event, the committed turn before it is intact,
the session takes new turns, the interrupted run still reports the usage it spent before the kill, and the
planted provider key never shows in the server's stdout/stderr.
"""

from __future__ import annotations

import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fleet_rlm.testing import FakeLMServer
from tests.helpers import parse_sse
from tests.reliability.server_process import ServerProcess, _free_port, server_env
from tests.security.harness import CANARY_SECRET, CellScript, files_containing, new_session, run_turn

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent


@pytest.fixture
def script() -> Iterator[tuple[CellScript, FakeLMServer]]:
    cells = CellScript()
    with FakeLMServer(rule=cells) as lm:
        yield cells, lm


def test_kill_9_mid_turn_then_restart(
    tmp_path: Path, database_url: str, script: tuple[CellScript, FakeLMServer]
) -> None:
    cells, lm = script
    env = server_env(
        database_url,
        tmp_path / "data",
        lm.model,
        lm.base_url,
        FLEET_RUN_HEARTBEAT_S="0.5",
        FLEET_RUN_STALE_AFTER_S="3",
        DSPY_LLM_API_KEY=CANARY_SECRET,
        OPENAI_API_KEY=CANARY_SECRET,
    )
    log = tmp_path / "server.log"
    server = ServerProcess(env, log)
    server.start()
    try:
        with httpx.Client(base_url=server.base, timeout=60) as http:
            session_id = new_session(http)
            committed = run_turn(http, session_id, cells.register("first", "print('committed work')"))
            assert committed.terminal["type"] == "turn_finished"
            slow = "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"
            started: dict[str, Any] = {}

            def drive() -> None:
                body = {"content": cells.register("slow", slow), "execution_mode": "rlm"}
                headers = {"Idempotency-Key": uuid.uuid4().hex}
                try:
                    with httpx.stream(
                        "POST",
                        f"{server.base}/api/v1/sessions/{session_id}/turns",
                        json=body,
                        headers=headers,
                        timeout=120,
                    ) as response:
                        started["run_id"] = response.headers["X-Run-Id"]
                        for chunk in response.iter_text():
                            # the slow cell's code event: it is running now (its output comes when it ends)
                            if ('"type": "code"' in chunk or '"type":"code"' in chunk) and "tick" in chunk:
                                started["output"] = True
                except httpx.HTTPError:
                    started["cut"] = True  # the server died under the stream: expected

            driver = threading.Thread(target=drive, daemon=True)
            driver.start()
            deadline = time.monotonic() + 60
            while "output" not in started and time.monotonic() < deadline:
                time.sleep(0.05)
            assert "output" in started, "the slow turn never started its cell"
            # events reach a live client before their group commit (docs/performance.md): kill only once the
            # LM call's usage is stored, so what the restart must report is known to be durable
            while not http.get(f"/api/v1/runs/{started['run_id']}").json()["usage"] and time.monotonic() < deadline:
                time.sleep(0.05)
            server.kill()
            driver.join(timeout=30)
        server.port = _free_port()
        server.start()
        with httpx.Client(base_url=server.base, timeout=60) as http:
            run_id = started["run_id"]
            deadline = time.monotonic() + 30
            run = http.get(f"/api/v1/runs/{run_id}").json()
            while run["status"] != "interrupted" and time.monotonic() < deadline:
                time.sleep(0.2)
                run = http.get(f"/api/v1/runs/{run_id}").json()
            assert run["status"] == "interrupted", run
            spent = run["usage"]  # durable as the turn went: the LM call before the slow cell is still counted
            assert spent["lm_calls"] >= 1 and spent["tokens_in"] > 0 and spent["by_role"]["root"]["lm_calls"] >= 1
            events = http.get(f"/api/v1/runs/{run_id}/events", params={"limit": 200}).json()["items"]
            assert events[-1]["type"] == "turn_interrupted" and events[-1]["reason"]
            assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
            with http.stream("GET", f"/api/v1/runs/{run_id}/stream", params={"after": 0}) as response:
                replay = parse_sse("".join(response.iter_text()))
            assert replay and replay[-1]["type"] == "turn_interrupted"
            turns = http.get(f"/api/v1/sessions/{session_id}/turns").json()["items"]
            assert turns[0]["answer"] == "done", "the committed turn must survive the crash"
            after = run_turn(http, session_id, cells.register("after", "print('back')"))
            assert after.terminal["type"] == "turn_finished" and "back" in after.output
            assert CANARY_SECRET not in http.get(f"/api/v1/sessions/{session_id}/export").text
    finally:
        server.stop()
    assert CANARY_SECRET not in log.read_text(errors="replace"), "the provider key leaked into server output"
    assert not files_containing(tmp_path / "data" / "logs", CANARY_SECRET)
