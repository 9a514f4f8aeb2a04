"""Pool: warm leases, per-session reuse, ephemeral leases when busy, idle release, dead workers, no orphans, and
a session's worker prepared before its turn leases it."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from fleet_rlm.sandbox import SandboxOptions, SandboxPool
from fleet_rlm.sandbox.local import LocalBackend
from fleet_rlm.sandbox.session import Spawn, WorkerLost, WorkerSession


def _run(session: WorkerSession, code: str) -> str:
    result = session.run_cell(code, {}, tools=[], output_fields=None, on_call=lambda frame: None)
    return result.output.strip() or str(result.header.get("error"))


@pytest.fixture
def pool(options: SandboxOptions) -> SandboxPool:
    p = SandboxPool(options, size=2, idle_timeout_s=0.3)
    yield p  # type: ignore[misc]
    p.shutdown()


def test_prewarm_gives_warm_leases(pool: SandboxPool) -> None:
    pool.prewarm("ws1", wait=True)
    assert pool.stats()["spares"] == 2
    session = pool.lease("a", "ws1")
    assert session.alive() and session.workspace_id == "ws1"
    assert time.monotonic() - session.started_at > 0  # it was started before the lease
    pool.release("a", session)


def test_session_reuses_worker_and_state(pool: SandboxPool) -> None:
    first = pool.lease("s", "ws")
    _run(first, "x = 5")
    pool.release("s", first)
    second = pool.lease("s", "ws")
    assert second is first and _run(second, "print(x)") == "5"
    nested = pool.lease("s", "ws")  # busy: an ephemeral worker, closed on release
    assert nested is not first
    pool.release("s", nested)
    assert not nested.alive()
    pool.release("s", second)


def test_idle_session_released_and_dead_replaced(pool: SandboxPool) -> None:
    session = pool.lease("idle", "ws")
    pool.release("idle", session)
    deadline = time.monotonic() + 5
    while session.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not session.alive()
    fresh = pool.lease("idle", "ws")
    assert fresh is not session and fresh.alive()
    fresh.handle.kill()
    pool.release("idle", fresh)
    again = pool.lease("idle", "ws")
    assert again is not fresh and again.alive()
    pool.release("idle", again)


def test_other_workspace_gets_its_own_worker(pool: SandboxPool, tmp_path: Path) -> None:
    a = pool.lease(None, "alpha")
    b = pool.lease(None, "beta")
    _run(a, "open(WORKSPACE_ROOT + '/artifacts/a.txt', 'w').write('a')")
    assert _run(b, "import os\nprint(os.listdir(WORKSPACE_ROOT + '/artifacts'))") == "[]"
    pool.release(None, a)
    pool.release(None, b)


def test_shutdown_leaves_no_processes(options: SandboxOptions) -> None:
    pool = SandboxPool(options, size=2)
    pool.prewarm("ws", wait=False)
    session = pool.lease("s", "ws")
    pids = [session.handle.process.pid]  # type: ignore[attr-defined]
    pool.shutdown()
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    assert not session.alive()


def test_worker_outlives_the_thread_that_started_it(options: SandboxOptions) -> None:
    """PR_SET_PDEATHSIG follows the forking *thread*; workers must not die when a pool thread exits."""
    import threading

    box: list[WorkerSession] = []
    thread = threading.Thread(target=lambda: box.append(_started(options)))
    thread.start()
    thread.join()
    time.sleep(0.3)
    try:
        assert box[0].alive() and _run(box[0], "print('alive')") == "alive"
    finally:
        box[0].close()


def _started(options: SandboxOptions) -> WorkerSession:
    session = WorkerSession(options, "ws")
    session.wait_ready()
    return session


class CountingBackend(LocalBackend):
    """The local backend, keeping every worker it starts (to count them and check them after a shutdown)."""

    def __init__(self) -> None:
        self.started: list[Any] = []
        self._lock = threading.Lock()

    def spawner(self, *, session_id: str | None = None, role: str = "root", parent_id: str | None = None) -> Spawn:
        inner = super().spawner(session_id=session_id, role=role, parent_id=parent_id)

        def spawn(options: SandboxOptions, workspace_id: str | None = None) -> Any:
            worker = inner(options, workspace_id)
            with self._lock:
                self.started.append(worker)
            return worker

        return spawn


class NoSparesBackend(CountingBackend):
    keeps_spares = False  # as Daytona's: a sandbox started on speculation would be billed


@contextmanager
def _counted(options: SandboxOptions, size: int, backend: CountingBackend | None = None) -> Iterator[Any]:
    """A pool on a counting backend (shut down after): yields (pool, backend)."""
    backend = backend or CountingBackend()
    pool = SandboxPool(options, backend=backend, size=size)
    try:
        yield pool, backend
    finally:
        pool.shutdown()


def _wait(predicate: Callable[[], bool], timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_prepared_worker_is_the_sessions_lease_started_once(options: SandboxOptions) -> None:
    with _counted(options, 0) as (pool, backend):
        pool.prepare("s", "ws")
        session = pool.lease("s", "ws")  # while it starts: waits for it instead of starting another
        assert len(backend.started) == 1 and _run(session, "x = 5\nprint(x)") == "5"
        pool.release("s", session)
        pool.prepare("s", "ws")  # it has its worker: nothing starts, the REPL state stays
        again = pool.lease("s", "ws")
        assert again is session and _run(again, "print(x)") == "5" and len(backend.started) == 1
        pool.release("s", again)
        assert pool.stats() == {"spares": 0, "starting": 0, "leased": 0, "idle": 1}


def test_prepare_claims_a_spare_and_refills(options: SandboxOptions) -> None:
    with _counted(options, 1) as (pool, backend):
        pool.prewarm("ws", wait=True)
        spare = backend.started[0]
        pool.prepare("p", "ws")
        assert [(lease.session_id, lease.busy) for lease in pool.leases()] == [("p", False)]  # at once
        session = pool.lease("p", "ws")
        assert session.handle is spare  # type: ignore[attr-defined]
        _wait(lambda: pool.stats()["spares"] == 1)  # the spare was refilled in the background
        assert len(backend.started) == 2
        pool.release("p", session)


def test_prepare_fills_the_workspaces_spares_as_a_lease_does(options: SandboxOptions) -> None:
    """A pool with no spares yet: the prepared session's start also starts the workspace's spares, so the next
    session's turn claims a warm one instead of paying a cold start (as every turn did before this)."""
    with _counted(options, 1) as (pool, _backend):
        pool.prepare("first", "ws")
        _wait(lambda: pool.stats() == {"spares": 1, "starting": 0, "leased": 0, "idle": 1})
        pool.prepare("second", "ws")  # claims that spare at once
        assert {lease.session_id for lease in pool.leases()} == {"first", "second"}


def test_prepare_starts_nothing_on_a_backend_without_spares(options: SandboxOptions) -> None:
    with _counted(options, 2, NoSparesBackend()) as (pool, backend):
        pool.prepare("s", "ws")
        assert pool.leases() == [] and pool.stats()["starting"] == 0 and backend.started == []


def test_shutdown_while_preparing_leaves_no_worker(options: SandboxOptions) -> None:
    backend = CountingBackend()
    pool = SandboxPool(options, backend=backend, size=0)
    pool.prepare("s", "ws")
    pool.shutdown()  # waits for the start, then closes what it started
    assert len(backend.started) <= 1 and not any(worker.alive() for worker in backend.started)
    with pytest.raises(WorkerLost):
        pool.lease("s", "ws")
