"""Run conversions in converter processes (`worker`) started lazily and reused, at most two at a time.

Why a persistent process and not one per document: starting Python and importing pypdf, python-docx, lxml and
BeautifulSoup costs most of a second on a loaded machine, which every attached PDF would pay; a warm worker
answers a 200 KB document in milliseconds more than the parse itself (see docs/security.md, "Document
limits", for the measurements). The server waits for each reply until `timeout_s` (wall clock), then kills the
worker; the worker enforces memory and CPU limits on itself (see `worker`). A worker that hit a limit, died or
grew large is discarded and the next job starts a fresh one, so one bomb never poisons later conversions.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import fleet_rlm
from fleet_rlm.runtime.docsafe import wire
from fleet_rlm.runtime.docsafe.limits import DocumentLimits, converter_died, error_from_wire, timed_out, too_large

MAX_WORKERS = 2
IDLE_SECONDS = 300.0
START_TIMEOUT_S = 60.0
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from fleet_rlm.runtime.docsafe.worker import main; main()"
_SOURCE_ROOT = str(Path(fleet_rlm.__file__).resolve().parent.parent)


class _Worker:
    """One converter process; its pipes are non-blocking and only read or written with a deadline."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, _SOURCE_ROOT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={"PATH": os.defpath, "LANG": "C.UTF-8"},  # none of the server's secrets
            start_new_session=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin.fileno(), self.process.stdout.fileno()
        os.set_blocking(self.stdin, False)
        os.set_blocking(self.stdout, False)
        self.idle_since = time.monotonic()
        try:
            ready = wire.receive(self.stdout, len(wire.READY), time.monotonic() + START_TIMEOUT_S)
        except (wire.Deadline, wire.Closed):
            ready = b""
        if ready != wire.READY:
            self.kill()
            raise converter_died("(starting)", "did not start")

    def run(self, request: bytes, deadline: float) -> tuple[dict[str, Any], bytes]:
        wire.send(self.stdin, request, deadline)
        return wire.receive_frame(self.stdout, deadline)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()

    def exit_code(self) -> int | None:
        """How the process ended, once it closed its stdout (None if it had to be killed)."""
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            return None
        finally:
            self.kill()

    def retire(self) -> None:
        """The worker exits by itself after a `retire` answer; reap it (kill it if it lingers)."""
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


class ConverterPool:
    """Lazily started converter processes; `convert` blocks the calling thread (context loading runs in one)."""

    def __init__(self, max_workers: int = MAX_WORKERS) -> None:
        self._slots = threading.BoundedSemaphore(max_workers)
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []

    def convert(self, kind: str, data: bytes, *, name: str, limits: DocumentLimits) -> tuple[str, dict[str, Any]]:
        """Text and info of `data`, or the `FleetError` the worker answered or the limit that stopped it."""
        request = wire.encode({"kind": kind, "name": name, "limits": limits.to_dict()}, data)
        with self._slots:
            worker = self._checkout()
            deadline = time.monotonic() + limits.timeout_s
            try:
                reply, text = worker.run(request, deadline)
            except wire.Deadline:
                worker.kill()
                raise timed_out(name, limits.timeout_s) from None
            except wire.Closed:
                raise _death(worker.exit_code(), name, limits) from None
            except BaseException:
                worker.kill()
                raise
            if reply.get("retire"):
                worker.retire()
            else:
                self._checkin(worker)
        if not reply.get("ok"):
            raise error_from_wire(reply.get("error") or {})
        return text.decode("utf-8"), dict(reply.get("info") or {})

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()

    def worker_pids(self) -> list[int]:
        """Idle workers' process ids (for tests and diagnostics)."""
        with self._lock:
            return [worker.process.pid for worker in self._idle]

    def _checkout(self) -> _Worker:
        now = time.monotonic()
        stale: list[_Worker] = []
        chosen: _Worker | None = None
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.process.poll() is not None or now - worker.idle_since > IDLE_SECONDS:
                    stale.append(worker)
                    continue
                chosen = worker
                break
        for worker in stale:
            worker.kill()
        return chosen or _Worker()

    def _checkin(self, worker: _Worker) -> None:
        worker.idle_since = time.monotonic()
        with self._lock:
            self._idle.append(worker)


def _death(returncode: int | None, name: str, limits: DocumentLimits) -> Exception:
    if returncode == -signal.SIGXCPU:
        return timed_out(name, limits.timeout_s)
    if returncode == -signal.SIGKILL:  # not ours (we kill only after a deadline): the kernel's OOM killer
        return too_large(name, "converting it ran out of memory", "memory_mb", f"{limits.memory_mb} MiB")
    how = f"was killed by signal {-returncode}" if returncode is not None and returncode < 0 else "exited"
    return converter_died(name, f"{how} (limits: {limits.memory_mb} MiB, {limits.timeout_s:g} s)")


_POOL = ConverterPool()


def shared_pool() -> ConverterPool:
    """The process-wide pool (workers are reaped when idle, and exit when the server closes their stdin)."""
    return _POOL
