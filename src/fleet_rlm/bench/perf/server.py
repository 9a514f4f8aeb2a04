"""The real path: a fake LM process and `fleet-rlm serve-api` as subprocesses, driven over HTTP and WebSocket.

The bench layer may not import the API, and measuring through a real server process is the point anyway: a turn
goes API -> runtime -> sandbox -> store -> WebSocket exactly as for a user. Both processes are ours and end with
the context manager.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import websockets

from fleet_rlm.events import TERMINAL_TYPES

FAKE_MODEL = "openai/fake-model"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class FakeLMProcess:
    """The scripted fake LM (bench.perf.script) in its own process, so its work never shares our GIL."""

    def __init__(self, latency_s: float = 0.0) -> None:
        command = [sys.executable, "-m", "fleet_rlm.bench.perf.script", str(latency_s)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http"):
            self.stop()
            raise RuntimeError("the fake LM process did not start")

    def set_latency(self, seconds: float) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"latency {seconds}\n")
        self.process.stdin.flush()
        if self.process.stdout.readline().strip() != "ok":
            raise RuntimeError("the fake LM process did not take the new latency")

    def stop(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@contextmanager
def fake_lm_process(latency_s: float = 0.0) -> Iterator[FakeLMProcess]:
    lm = FakeLMProcess(latency_s)
    try:
        yield lm
    finally:
        lm.stop()


def server_command() -> list[str]:
    """argv of `fleet-rlm serve-api` (the console script beside this Python, else the entry point)."""
    script = Path(sys.executable).with_name("fleet-rlm")
    if script.exists():
        return [str(script), "serve-api"]
    found = shutil.which("fleet-rlm")
    if found:
        return [found, "serve-api"]
    entry = "import sys; from fleet_rlm.cli.main import fleet_rlm_entry; sys.argv[0] = 'fleet-rlm'; fleet_rlm_entry()"
    return [sys.executable, "-c", entry, "serve-api"]


@dataclass
class ApiServer:
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def ws_url(self) -> str:
        return self.base_url.replace("http://", "ws://", 1)

    @property
    def pid(self) -> int:
        return self.process.pid


@contextmanager
def api_server(data_dir: Path, lm_base_url: str, **settings: Any) -> Iterator[ApiServer]:
    """`fleet-rlm serve-api` on a free loopback port with its own data dir; `settings` are FLEET_* overrides."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEET_", "DSPY_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: a server imports from cached bytecode (cli_case too)
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "host": "127.0.0.1",
        "port": port,
        "log_level": "warning",
        "lm_model": FAKE_MODEL,
        "lm_api_base": lm_base_url,
        "lm_api_key": "fake",
        "lm_num_retries": 0,
        **settings,
    }
    env.update({f"FLEET_{key.upper()}": str(value) for key, value in values.items() if value is not None})
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(server_command(), env=env, stdout=log, stderr=subprocess.STDOUT)
    server = ApiServer(f"http://127.0.0.1:{port}", process, log_path)
    try:
        _wait_healthy(server)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_healthy(server: ApiServer, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            tail = server.log_path.read_text(errors="replace")[-800:]
            raise RuntimeError(f"serve-api exited with {server.process.returncode}: {tail}")
        try:
            if httpx.get(server.base_url + "/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"serve-api did not become healthy within {timeout_s:g} s")


def new_session(server: ApiServer, title: str = "perf") -> str:
    response = httpx.post(server.base_url + "/api/v1/sessions", json={"title": title, "origin": "bench"}, timeout=30)
    response.raise_for_status()
    return str(response.json()["id"])


@dataclass
class TurnTrace:
    """What one WebSocket client saw of one turn."""

    sent_at: float
    ended_at: float = 0.0
    events: list[dict[str, Any]] = field(default_factory=list)
    delays_ms: list[float] = field(default_factory=list)
    """Receipt time minus each event's `ts` (same machine clock)."""

    @property
    def wall_s(self) -> float:
        return self.ended_at - self.sent_at

    @property
    def terminal(self) -> str | None:
        return self.events[-1]["type"] if self.events and self.events[-1]["type"] in TERMINAL_TYPES else None


def _epoch(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


async def ws_turn(server: ApiServer, session_id: str, content: str, *, timeout_s: float = 300.0) -> TurnTrace:
    """Send one `message` frame on /api/v1/ws/execution and read events until the turn's terminal event."""
    frame = {"type": "message", "session_id": session_id, "content": content, "execution_mode": "rlm"}
    async with websockets.connect(server.ws_url + "/api/v1/ws/execution", max_size=None) as ws:
        trace = TurnTrace(sent_at=time.perf_counter())
        await ws.send(json.dumps(frame))
        async with asyncio.timeout(timeout_s):
            while trace.terminal is None:
                message = json.loads(await ws.recv())
                received = time.time()
                if message.get("type") == "error":
                    raise RuntimeError(f"turn refused: {message}")
                if message.get("type") != "event":
                    continue
                event = message["data"]
                trace.delays_ms.append((received - _epoch(event["ts"])) * 1000.0)
                trace.events.append(event)
        trace.ended_at = time.perf_counter()
    return trace


@dataclass
class Harness:
    """The fake LM process and one API server on it, shared by the full-path scenarios of a suite run."""

    lm: FakeLMProcess
    server: ApiServer


SERVER_SETTINGS = {"sandbox_pool_size": 2, "max_iters": 10, "batch_concurrency": 16, "max_llm_calls": 400}


@contextmanager
def harness(data_dir: Path, **settings: Any) -> Iterator[Harness]:
    """`settings` are FLEET_* overrides on top of SERVER_SETTINGS."""
    with fake_lm_process(0.0) as lm, api_server(data_dir, lm.base_url, **{**SERVER_SETTINGS, **settings}) as server:
        yield Harness(lm, server)
