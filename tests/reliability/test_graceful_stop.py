"""SIGTERM to a `fleet-rlm serve-api` process with a turn running that would take far longer than the grace.

The server stops taking turns at once (`503 shutting_down`), gives the running turn `FLEET_SHUTDOWN_GRACE_S`,
then records it `interrupted` (its SSE client sees turn_interrupted last) and exits on its own. After a restart
the run is interrupted with its usage so far, its events replay gap-free and the session takes new turns.
"""

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
from tests.helpers import parse_sse
from tests.reliability.server_process import ServerProcess, _free_port, server_env
from tests.security.harness import CellScript, new_session, run_turn

pytestmark = pytest.mark.slow
GRACE_S = 2
EXIT_MARGIN_S = 40  # generous: the bound proves "does not wait for the turn", not how fast the exit is


@pytest.fixture
def script() -> Iterator[tuple[CellScript, FakeLMServer]]:
    cells = CellScript()
    with FakeLMServer(rule=cells) as lm:
        yield cells, lm


def _wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_sigterm_refuses_new_turns_interrupts_running_ones_after_the_grace_and_exits(
    tmp_path: Path, database_url: str, script: tuple[CellScript, FakeLMServer]
) -> None:
    cells, lm = script
    env = server_env(database_url, tmp_path / "data", lm.model, lm.base_url, FLEET_SHUTDOWN_GRACE_S=str(GRACE_S))
    log = tmp_path / "server.log"
    server = ServerProcess(env, log)
    server.start()
    seen: dict[str, Any] = {"events": []}
    try:
        with httpx.Client(base_url=server.base, timeout=60) as http:
            session_id = new_session(http)
            other_session = new_session(http, title="other")
            warm = run_turn(http, session_id, cells.register("warm", "print('warm')"))  # imports, sandbox
            assert warm.terminal["type"] == "turn_finished"
            slow = "import time\nfor i in range(2400):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"

            def drive() -> None:
                body = {"content": cells.register("slow", slow), "execution_mode": "rlm"}
                url = f"{server.base}/api/v1/sessions/{session_id}/turns"
                headers = {"Idempotency-Key": uuid.uuid4().hex}
                try:
                    with httpx.stream("POST", url, json=body, headers=headers, timeout=120) as response:
                        seen["run_id"] = response.headers["X-Run-Id"]
                        buffer = ""
                        for chunk in response.iter_text():
                            buffer += chunk
                            *blocks, buffer = buffer.split("\n\n")
                            seen["events"] += parse_sse("\n\n".join(blocks) + "\n\n")
                except httpx.HTTPError as exc:
                    seen["error"] = repr(exc)

            driver = threading.Thread(target=drive, daemon=True)
            driver.start()
            _wait_for(
                lambda: any(e["type"] == "code" and "tick" in e["code"] for e in seen["events"]), 120, "the slow cell"
            )
            assert server.process is not None
            server.terminate()
            _wait_for(lambda: "no new turns" in log.read_text(errors="replace"), 30, "the drain to begin")
            refused = http.post(
                f"/api/v1/sessions/{other_session}/turns",
                json={"content": "hello", "execution_mode": "direct"},
                headers={"Idempotency-Key": uuid.uuid4().hex},
            )
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"]["code"] == "shutting_down"
            server.process.wait(timeout=GRACE_S + EXIT_MARGIN_S)  # exits by itself, long before the turn would end
            driver.join(timeout=30)
        assert seen["events"] and seen["events"][-1]["type"] == "turn_interrupted", seen
        run_id = seen["run_id"]
        server.port = _free_port()
        server.start()
        with httpx.Client(base_url=server.base, timeout=60) as http:
            run = http.get(f"/api/v1/runs/{run_id}").json()
            assert run["status"] == "interrupted", run
            assert run["usage"]["lm_calls"] >= 1 and run["usage"]["tokens_in"] > 0
            events = http.get(f"/api/v1/runs/{run_id}/events", params={"limit": 500}).json()["items"]
            assert events[-1]["type"] == "turn_interrupted" and "server stopped" in events[-1]["reason"]
            assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
            assert sum(event["type"] == "turn_interrupted" for event in events) == 1
            with http.stream("GET", f"/api/v1/runs/{run_id}/stream", params={"after": 0}) as response:
                replay = parse_sse("".join(response.iter_text()))
            assert [e["seq"] for e in replay] == [e["seq"] for e in events]
            assert http.get(f"/api/v1/sessions/{other_session}/turns").json()["items"] == []
            after = run_turn(http, session_id, cells.register("after", "print('back')"))
            assert after.terminal["type"] == "turn_finished" and "back" in after.output
    finally:
        server.stop()
