"""Queue execution on one Postgres: an API server that runs no turns, `fleet-rlm worker` processes that do.

A turn started on the API runs on a worker and its events reach a client following on the API; a cancel from
the API aborts it on the worker; a worker paused (SIGSTOP) past the stale limit, whose run was meanwhile marked
interrupted, has its late writes refused when it wakes (nothing after the terminal event, no seq gap).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
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
STALE_S = 4.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _rule() -> Any:
    auto = adapter_fields_rule(answer="answered on a worker")

    def rule(request: Any) -> Any:
        if "`code`" in request.system_text and "`reasoning`" in request.system_text and "tick" in request.text:
            return rlm_step(
                "tick", "import time\nfor i in range(300):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"
            )
        return auto(request)

    return rule


def _query(url: str, sql: str) -> list[tuple[Any, ...]]:
    import asyncpg

    async def run() -> list[tuple[Any, ...]]:
        connection = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            return [tuple(row) for row in await connection.fetch(sql)]
        finally:
            await connection.close()

    return asyncio.run(run())


@pytest.fixture
def database() -> Iterator[str]:
    from fleet_rlm.services.queue.schema import apply_queue_schema
    from fleet_rlm.store import migrate

    url = make_postgres_database()
    migrate.upgrade(url, "head")
    asyncio.run(apply_queue_schema(url))
    try:
        yield url
    finally:
        drop_postgres_database(url)


class Deployment:
    """One API server (queue execution) and one worker on `database`, with the fake LM."""

    def __init__(self, database: str, tmp_path: Path, lm: FakeLMServer, *, worker: bool = True) -> None:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("FLEET_", "DSPY_"))}
        env.update(
            FLEET_DATABASE_URL=database,
            FLEET_EXECUTION="queue",
            FLEET_SANDBOX_POOL_SIZE="0",
            FLEET_TURN_PROCESSES="1",
            FLEET_RUN_HEARTBEAT_S="0.5",
            FLEET_RUN_STALE_AFTER_S=str(STALE_S),
            DSPY_LM_MODEL=lm.model,
            DSPY_LM_API_BASE=lm.base_url,
            DSPY_LLM_API_KEY="fake",
        )
        self.env, self.tmp = env, tmp_path
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.api_log = tmp_path / "api.log"
        self.api = self._spawn(["serve-api", "--port", str(self.port)], "api", self.api_log)
        self.worker_log = tmp_path / "worker.log"
        self.worker = self._spawn(
            ["worker", "--concurrency", "2"] if worker else ["--version"], "worker", self.worker_log
        )
        self._wait_ready(worker)

    def _spawn(self, args: list[str], data: str, log: Path) -> subprocess.Popen[bytes]:
        env = {**self.env, "FLEET_DATA_DIR": str(self.tmp / "data")}  # one shared data dir (one machine)
        return subprocess.Popen(
            [str(BIN / "fleet-rlm"), *args], env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
        )

    def _wait_ready(self, worker: bool) -> None:
        deadline = time.monotonic() + 240
        api_up, worker_up = False, not worker
        while time.monotonic() < deadline and not (api_up and worker_up):
            assert self.api.poll() is None, self.api_log.read_text()
            if worker:
                assert self.worker.poll() is None, self.worker_log.read_text()
                worker_up = "turn slot(s)" in self.worker_log.read_text()
            try:
                api_up = api_up or httpx.get(f"{self.base}/ready", timeout=2).status_code == 200
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        assert api_up and worker_up, f"{self.api_log.read_text()}\n{self.worker_log.read_text()}"

    def stop(self) -> None:
        for process in (self.worker, self.api):
            if process.poll() is None:
                process.send_signal(signal.SIGCONT)
                process.terminate()
        for process in (self.worker, self.api):
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()

    def session(self) -> str:
        return str(httpx.post(f"{self.base}/api/v1/sessions", json={"title": "queue"}).json()["id"])

    def start_turn(self, session_id: str, body: dict[str, Any], key: str) -> tuple[str, threading.Thread]:
        """Start a turn over SSE in the background; returns its run id once the API answered."""
        run_ids: list[str] = []

        def drive() -> None:
            url = f"{self.base}/api/v1/sessions/{session_id}/turns"
            with httpx.stream("POST", url, json=body, headers={"Idempotency-Key": key}, timeout=120) as response:
                run_ids.append(response.headers["X-Run-Id"])
                for _ in response.iter_bytes():
                    pass

        driver = threading.Thread(target=drive, daemon=True)
        driver.start()
        deadline = time.monotonic() + 30
        while not run_ids and time.monotonic() < deadline:
            time.sleep(0.05)
        assert run_ids, "the API did not start the turn"
        return run_ids[0], driver

    def follow(self, run_id: str, on_event: Any = None, timeout: float = 120) -> list[dict[str, Any]]:
        """Every event of the run over the API's WebSocket until its end."""
        seen: list[dict[str, Any]] = []
        with connect(f"ws://127.0.0.1:{self.port}/api/v1/ws/execution/events?run_id={run_id}&after=0") as ws:
            while True:
                frame = json.loads(ws.recv(timeout=timeout))
                if frame["type"] == "end":
                    return seen
                seen.append(frame["data"])
                if on_event is not None:
                    on_event(frame["data"])

    def status(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.base}/api/v1/runtime/status", timeout=10).json())

    def run(self, run_id: str) -> dict[str, Any]:
        return dict(httpx.get(f"{self.base}/api/v1/runs/{run_id}").json())


@pytest.fixture
def deployment(database: str, tmp_path: Path) -> Iterator[Deployment]:
    with FakeLMServer(rule=_rule()) as lm:
        running = Deployment(database, tmp_path, lm)
        try:
            yield running
        finally:
            running.stop()


def test_turn_runs_on_a_worker_and_is_cancelled_from_the_api(deployment: Deployment, database: str) -> None:
    status = deployment.status()
    assert status["execution"] == "queue" and status["turn_workers"] == 0  # the API runs no turns
    (worker,) = status["queue"]["workers"]
    assert worker["name"].endswith(f":{deployment.worker.pid}") and worker["alive"]
    assert (worker["turn_slots"], worker["turns_running"], worker["optimization_slots"]) == (2, 0, 1)
    session_id = deployment.session()
    run_id, driver = deployment.start_turn(session_id, {"content": "say hi", "execution_mode": "direct"}, "q1")
    events = deployment.follow(run_id)
    assert [event["type"] for event in events[:2]] == ["turn_queued", "turn_started"]  # waited, then a worker took it
    assert events[0]["queue"] == "turns" and events[-1]["type"] == "turn_finished"
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    run = deployment.run(run_id)
    assert run["status"] == "succeeded"
    ((owner, epoch),) = _query(database, f"SELECT owner, claim_epoch FROM runs WHERE id = '{run_id}'")
    assert owner.endswith(f":{deployment.worker.pid}") and epoch == 1  # claimed and run by the worker process
    ((answer,),) = _query(database, f"SELECT answer FROM turns WHERE run_id = '{run_id}'")
    assert answer == "answered on a worker"
    driver.join(timeout=30)

    # a slow turn in the same session goes to this worker's own queue; a cancel from the API aborts it there
    run_id, driver = deployment.start_turn(session_id, {"content": "tick for a while", "execution_mode": "rlm"}, "q2")
    ((queue,),) = _query(database, f"SELECT queue_name FROM procrastinate_jobs WHERE lock = 'turn:{run_id}'")
    assert queue == f"turns@{owner}"
    cancelled_at: list[float] = []

    def cancel_on_output(event: dict[str, Any]) -> None:
        if not cancelled_at and event["type"] == "output":
            assert deployment.status()["queue"]["workers"][0]["turns_running"] == 1
            response = httpx.put(f"{deployment.base}/api/v1/runs/{run_id}/cancellation", timeout=10)
            assert response.status_code == 202
            cancelled_at.append(time.monotonic())

    events = deployment.follow(run_id, cancel_on_output)
    assert events[0]["type"] == "turn_queued" and events[0]["queue"] == f"turns@{owner}"
    assert cancelled_at, "no live output from the worker reached the API"
    assert events[-1]["type"] == "turn_cancelled"
    assert time.monotonic() - cancelled_at[0] < 10
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    assert deployment.run(run_id)["status"] == "cancelled"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # the queue's job ends too (aborted through Procrastinate)
        ((status,),) = _query(database, f"SELECT status::text FROM procrastinate_jobs WHERE lock = 'turn:{run_id}'")
        if status != "doing":
            break
        time.sleep(0.2)
    assert status == "aborted"
    driver.join(timeout=30)


def test_a_paused_worker_cannot_write_after_its_run_moved(deployment: Deployment, database: str) -> None:
    session_id = deployment.session()
    run_id, driver = deployment.start_turn(session_id, {"content": "tick for a while", "execution_mode": "rlm"}, "s1")
    paused: list[bool] = []

    def pause_on_output(event: dict[str, Any]) -> None:
        if not paused and event["type"] == "output":
            os.kill(deployment.worker.pid, signal.SIGSTOP)  # mid-turn: a cell is printing
            paused.append(True)

    events = deployment.follow(run_id, pause_on_output, timeout=STALE_S * 10)
    assert paused
    assert events[-1]["type"] == "turn_interrupted"  # the API's sweeper: the worker's heartbeat was lost
    assert deployment.run(run_id)["status"] == "interrupted"
    queue = deployment.status()["queue"]
    assert queue["stalled"] == 1 and not queue["workers"][0]["alive"]  # what an operator sees of a stuck worker
    os.kill(deployment.worker.pid, signal.SIGCONT)
    deadline = time.monotonic() + 30  # the woken worker goes on, tries to write, and is refused
    while "refused: its claim moved" not in deployment.worker_log.read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "refused: its claim moved" in deployment.worker_log.read_text()
    time.sleep(2)
    rows = _query(database, f"SELECT seq, type FROM run_events WHERE run_id = '{run_id}' ORDER BY seq")
    assert [seq for seq, _ in rows] == list(range(1, len(rows) + 1))  # no gap
    assert rows[-1][1] == "turn_interrupted"  # nothing after the terminal event
    assert [row[1] for row in rows].count("turn_interrupted") == 1
    ((status, last_seq),) = _query(database, f"SELECT status, last_seq FROM runs WHERE id = '{run_id}'")
    assert (status, last_seq) == ("interrupted", len(rows))
    ((answer,),) = _query(database, f"SELECT answer FROM turns WHERE run_id = '{run_id}'")
    assert answer is None
    driver.join(timeout=30)


def test_a_queued_turn_waits_for_a_worker_and_a_cancel_ends_it_at_once(database: str, tmp_path: Path) -> None:
    """No worker: the turn stays queued past the stale limit (the sweeper leaves queued runs to the queue); a
    cancel cancels its job and ends the run in the API itself."""
    with FakeLMServer(rule=_rule()) as lm:
        api_only = Deployment(database, tmp_path, lm, worker=False)
        try:
            session_id = api_only.session()
            run_id, driver = api_only.start_turn(session_id, {"content": "say hi", "execution_mode": "direct"}, "w1")
            time.sleep(STALE_S * 2)
            assert api_only.run(run_id)["status"] == "queued"
            assert api_only.status()["queue"]["depth"] == {"turns": 1}
            response = httpx.put(f"{api_only.base}/api/v1/runs/{run_id}/cancellation", timeout=10)
            assert response.status_code == 202
            assert api_only.run(run_id)["status"] == "cancelled"
            events = api_only.follow(run_id, timeout=10)
            assert [event["type"] for event in events] == ["turn_queued", "turn_cancelled"]
            ((status,),) = _query(database, f"SELECT status::text FROM procrastinate_jobs WHERE lock = 'turn:{run_id}'")
            assert status == "cancelled" and api_only.status()["queue"]["depth"] == {}
            driver.join(timeout=30)
        finally:
            api_only.stop()


def test_an_optimization_run_goes_to_its_own_queue_and_runs_on_a_worker(database: str, tmp_path: Path) -> None:
    from fleet_rlm.optimize.datasets import to_jsonl
    from tests.optimize.fakes import direct_rows, teaching_lm

    api = "/api/v1/optimization"
    with teaching_lm() as lm:
        running = Deployment(database, tmp_path, lm)
        try:
            body = {"module": "direct", "name": "squares", "content": to_jsonl(direct_rows(6)), "filename": "s.jsonl"}
            dataset_id = httpx.post(f"{running.base}{api}/datasets", json=body, timeout=30).json()["id"]
            started = httpx.post(
                f"{running.base}{api}/runs",
                json={"module": "direct", "dataset_id": dataset_id, "max_metric_calls": 16},
                timeout=30,
            )
            assert started.status_code == 202, started.text
            run_id = started.json()["id"]
            ((queue,),) = _query(
                database, f"SELECT queue_name FROM procrastinate_jobs WHERE lock = 'optimization:{run_id}'"
            )
            assert queue == "optimizations"
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                run = httpx.get(f"{running.base}{api}/runs/{run_id}", timeout=10).json()
                if run["status"] not in ("queued", "running"):
                    break
                time.sleep(0.5)
            assert run["status"] == "succeeded" and run["program_version"] == "direct-v1", run
            ((owner,),) = _query(database, f"SELECT owner FROM optimization_runs WHERE id = '{run_id}'")
            assert owner.endswith(f":{running.worker.pid}")  # the worker ran it, not the API
        finally:
            running.stop()
