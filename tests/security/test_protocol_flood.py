"""A guest flooding its protocol fd for 30 s against a real `fleet-rlm serve-api` (default settings: turns run in
the turn worker processes): the API process and every turn worker stay within +64 MB of RSS, the flooding
sandbox is reset with a protocol error the model sees, and another session's turns run normally meanwhile.

Issue #40, class 6: 32 MB of forged `call` frames grew the turn workers by ~860 MB. Method (also in
docs/security.md): RSS (VmRSS in /proc/<pid>/status) of the API process and of each turn worker (the forkserver's
children) sampled every 50 ms from a warm server (one ordinary turn done first) until the flood ends; the growth
is the peak sample minus the sample before the flood.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fleet_rlm.testing import FakeLMServer
from tests.security.harness import CellScript, assert_serves_normally, new_session, run_turn

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent
MB = 1024 * 1024
GROWTH_MAX = 64 * MB
FLOOD_S = 30.0

FLOOD_CELL = """
import gc, json, os, struct
channel = next(o for o in gc.get_objects() if type(o).__name__ == 'Channel')
sent, i = 0, 10**6
while sent < 32 * 1024 * 1024:
    raw = json.dumps({'t': 'call', 'id': i, 'name': 'no_such_tool', 'args': ['x'], 'kwargs': {}}).encode()
    data = memoryview(struct.pack('>II', len(raw), 0) + raw)
    with channel.lock:
        while data:
            data = data[os.write(channel.out_fd, data):]
    sent, i = sent + len(raw) + 8, i + 1
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            tree.setdefault(parent, []).append(int(entry))
    return tree


def turn_workers(api_pid: int) -> list[int]:
    """The API's turn worker processes: children of its multiprocessing forkserver (or spawned children)."""
    tree, found = _children(), []
    for child in tree.get(api_pid, []):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"forkserver" in cmdline:
            found.extend(tree.get(child, []))
        elif b"spawn_main" in cmdline:
            found.append(child)
    return found


class Peaks:
    """Peak RSS growth of each process, sampled every 50 ms against its RSS when sampling started."""

    def __init__(self, pids: list[int]) -> None:
        self.base = {pid: _rss(pid) for pid in pids}
        self.peak = dict.fromkeys(pids, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            for pid, base in self.base.items():
                self.peak[pid] = max(self.peak[pid], _rss(pid) - base)
            time.sleep(0.05)

    def stop(self) -> dict[int, int]:
        self._stop.set()
        self._thread.join()
        return self.peak


@pytest.fixture(scope="module")
def server(
    module_data: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[int, str, CellScript]]:
    data_dir, database_url = module_data
    log = tmp_path_factory.mktemp("log") / "server.log"
    port = _free_port()
    script = CellScript()
    with FakeLMServer(rule=script) as lm, log.open("ab") as handle:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEET_", "DSPY_", "OPENAI_"))}
        env.update(
            FLEET_DATABASE_URL=database_url,
            FLEET_DATA_DIR=str(data_dir),
            FLEET_LM_NUM_RETRIES="0",
            DSPY_LM_MODEL=lm.model,
            DSPY_LM_API_BASE=lm.base_url,
            DSPY_LLM_API_KEY="sk-test",
        )
        process = subprocess.Popen(
            [str(BIN / "fleet-rlm"), "serve-api", "--port", str(port)], env=env, stdout=handle, stderr=subprocess.STDOUT
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 120
            while True:
                assert process.poll() is None and time.monotonic() < deadline, log.read_text()
                try:
                    if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            yield process.pid, base, script
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


def test_a_30_second_protocol_flood_keeps_the_server_flat(server: tuple[int, str, CellScript]) -> None:
    api_pid, base, script = server
    with httpx.Client(base_url=base, timeout=120) as http:
        for _ in range(6):  # warm: sessions land on every turn worker, which then have their modules loaded
            assert_serves_normally(http, script)
        workers = turn_workers(api_pid)
        assert workers, "no turn worker processes found"
        peaks = Peaks([api_pid, *workers])
        flooder = new_session(http, title="flooder")
        started, resets, turns = time.monotonic(), [], 0
        neighbours: list[str] = []

        def neighbour() -> None:
            with httpx.Client(base_url=base, timeout=120) as own:
                while time.monotonic() - started < FLOOD_S:
                    session_id = new_session(own, title="neighbour")
                    turn = run_turn(own, session_id, script.register("neighbour", "x = 6 * 7\nprint(x)"))
                    neighbours.append(turn.terminal["type"] if "42" in turn.output else "wrong output")

        other = threading.Thread(target=neighbour, daemon=True)
        other.start()
        try:
            while time.monotonic() - started < FLOOD_S:
                turn = run_turn(http, flooder, script.register("flood", *[FLOOD_CELL] * 6))
                turns += 1
                resets += [event["reason"] for event in turn.of("sandbox_reset")]
        finally:
            other.join(timeout=180)
            growth = peaks.stop()
    report = {("api" if pid == api_pid else f"turn worker {pid}"): round(g / MB, 1) for pid, g in growth.items()}
    print(f"\nflood for {time.monotonic() - started:.0f} s, {turns} turns, {len(resets)} resets; peak MB: {report}")
    assert resets and all("broke the protocol" in reason for reason in resets), resets
    assert neighbours and set(neighbours) == {"turn_finished"}, neighbours
    assert all(g < GROWTH_MAX for g in growth.values()), report
