"""Load: 50 concurrent turns and 200 WebSocket subscribers (4 per run) against one `serve-api` process.

No request fails, every subscriber sees gap-free seqs from 1 ending in the terminal event, and the server's RSS
returns near its warmed-up baseline afterwards (generous tolerance: this is a leak detector, not a benchmark).
Bounded by an overall deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from fleet_rlm.testing import FakeLMServer, adapter_fields_rule
from tests.reliability.test_crash_restart import ServerProcess

pytestmark = pytest.mark.slow
TURNS = 50
SUBSCRIBERS_PER_TURN = 4
DEADLINE_S = 240


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def _turn(http: httpx.AsyncClient, session_id: str, runs: asyncio.Queue[str]) -> list[dict[str, Any]]:
    body = {"content": "load", "execution_mode": "direct"}
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    async with http.stream("POST", f"/api/v1/sessions/{session_id}/turns", json=body, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        await runs.put(response.headers["X-Run-Id"])
        text = "".join([chunk async for chunk in response.aiter_text()])
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


async def _subscribe(ws_base: str, run_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    async with connect(f"{ws_base}/api/v1/ws/execution/events?run_id={run_id}&after=0", open_timeout=60) as ws:
        while True:
            frame = json.loads(await ws.recv())
            if frame["type"] == "end":
                return events
            assert frame["type"] == "event", frame
            events.append(frame["data"])


async def _load(base: str, turns_n: int = TURNS, per_turn: int = SUBSCRIBERS_PER_TURN) -> tuple[list[Any], list[Any]]:
    ws_base = base.replace("http://", "ws://")
    limits = httpx.Limits(max_connections=turns_n + 10)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:
        sessions = [
            (await http.post("/api/v1/sessions", json={"title": f"load {i}"})).json()["id"] for i in range(turns_n)
        ]
        runs: asyncio.Queue[str] = asyncio.Queue()
        turns = [asyncio.create_task(_turn(http, session_id, runs)) for session_id in sessions]
        subscribers = []
        for _ in range(turns_n):
            run_id = await runs.get()
            subscribers += [asyncio.create_task(_subscribe(ws_base, run_id)) for _ in range(per_turn)]
        turn_results = await asyncio.gather(*turns, return_exceptions=True)
        subscriber_results = await asyncio.gather(*subscribers, return_exceptions=True)
    return turn_results, subscriber_results


def test_fifty_turns_two_hundred_subscribers(tmp_path: Path, database_url: str) -> None:
    with FakeLMServer(rule=adapter_fields_rule(answer="loaded"), latency_s=0.3) as lm:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("FLEET_", "DSPY_"))}
        env.update(
            FLEET_DATABASE_URL=database_url,
            FLEET_DATA_DIR=str(tmp_path / "data"),
            FLEET_SANDBOX_POOL_SIZE="0",
            FLEET_LOG_LEVEL="warning",
            DSPY_LM_MODEL=lm.model,
            DSPY_LM_API_BASE=lm.base_url,
            DSPY_LLM_API_KEY="fake",
        )
        server = ServerProcess(env, tmp_path / "server.log")
        server.start()
        try:
            assert server.process is not None
            pid = server.process.pid
            asyncio.run(asyncio.wait_for(_load(server.base, 5, 1), DEADLINE_S))  # warm-up (imports, pools)
            baseline = _rss_mb(pid)
            turn_results, subscriber_results = asyncio.run(asyncio.wait_for(_load(server.base), DEADLINE_S))
            errors = [r for r in [*turn_results, *subscriber_results] if isinstance(r, BaseException)]
            assert not errors, errors[:3]
            assert len(subscriber_results) == TURNS * SUBSCRIBERS_PER_TURN
            for events in [*turn_results, *subscriber_results]:
                seqs = [event["seq"] for event in events]
                assert seqs == list(range(1, len(seqs) + 1)), seqs
                assert events[-1]["type"] == "turn_finished", events[-1]
            time.sleep(2)
            after = _rss_mb(pid)
            assert after <= baseline * 1.5 + 64, f"RSS grew from {baseline:.0f} MiB to {after:.0f} MiB"
        finally:
            server.stop()
