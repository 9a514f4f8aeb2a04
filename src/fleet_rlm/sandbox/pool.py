"""Pool of warm workers and per-session leases.

bubblewrap binds the workspace when the process starts and nothing can be bound into it later without
privileges, so a warm worker is always *for a workspace*. The pool keeps up to `size` ready spares for the
most recently used workspaces (started in background threads; `prewarm` at server start), so a lease on a
known workspace never pays a cold start, and the spare is refilled in the background after each lease.

`prepare(session)` gets a session's worker ready before its turn leases it: a spare is claimed for it, else one
starts in the background, and a lease that comes while it starts waits for it rather than starting a second.
The API calls it as soon as a turn that runs code is created, so the start overlaps the turn's own setup.

A session keeps its worker across turns (REPL state kept) until it has been idle for `idle_timeout_s`. If the
session's worker is busy (a nested RLM in the same session) the lease is ephemeral: a fresh worker that is
closed on release. Dead workers are dropped on lease; `shutdown()` kills every worker the pool started.

The pool owns the process's `SandboxBackend` (chosen once from settings, `backends.build_pool`): every worker
it starts comes from that backend, and every interpreter leasing from it runs there.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from fleet_rlm.sandbox.backend import SandboxBackend
from fleet_rlm.sandbox.local import LocalBackend
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.session import WorkerLost, WorkerSession

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeaseInfo:
    """A read-only view of one session's sandbox (what the API lists). Times are epoch seconds."""

    session_id: str
    workspace_id: str
    started_at: float
    last_used_at: float
    busy: bool
    alive: bool


@dataclass
class _Lease:
    session: WorkerSession
    busy: bool = True
    last_used: float = field(default_factory=time.monotonic)
    started_wall: float = field(default_factory=time.time)
    used_wall: float = field(default_factory=time.time)


class SandboxPool:
    def __init__(
        self,
        options: SandboxOptions,
        *,
        backend: SandboxBackend | None = None,
        size: int = 2,
        idle_timeout_s: float = 900.0,
    ) -> None:
        self.options = options
        self.backend: SandboxBackend = backend or LocalBackend()
        self.size = size if self.backend.keeps_spares else 0
        self.idle_timeout_s = idle_timeout_s
        self._lock = threading.Lock()
        self._spares: OrderedDict[str, list[WorkerSession]] = OrderedDict()
        self._starting: dict[str, int] = {}
        self._leases: dict[str, _Lease] = {}
        self._preparing: dict[str, threading.Event] = {}  # session -> set once its prepared worker is leasable
        self._closed = False
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._reaper = threading.Thread(target=self._reap_loop, name="sandbox-pool-reaper", daemon=True)
        self._reaper.start()

    # --- spares --------------------------------------------------------------------------------------------
    def prewarm(self, workspace_id: str | None = None, *, wait: bool = False) -> None:
        """Start spares for a workspace in the background (up to `size` in total, newest workspaces first)."""
        workspace = workspace_id or self.options.workspace_id
        threads = []
        with self._lock:
            if self._closed or self.size <= 0:
                return
            self._spares.setdefault(workspace, [])
            self._spares.move_to_end(workspace)
            missing = self.size - len(self._spares[workspace]) - self._starting.get(workspace, 0)
            self._starting[workspace] = self._starting.get(workspace, 0) + max(missing, 0)
            for _ in range(max(missing, 0)):
                threads.append(threading.Thread(target=self._start_spare, args=(workspace,), daemon=True))
            # registered and started under the lock: a shutdown sees every started thread and joins it
            self._threads = [t for t in self._threads if t.is_alive()] + threads
            for thread in threads:
                thread.start()
        if wait:
            for thread in threads:
                thread.join()

    def _start_spare(self, workspace: str) -> None:
        try:
            session = self._new_session(workspace)
        except Exception as exc:
            logger.warning("could not pre-start a sandbox for %s: %s", workspace, exc)
            session = None
        evicted: list[WorkerSession] = []
        with self._lock:
            self._starting[workspace] -= 1
            if session is None:
                return
            if self._closed:
                evicted.append(session)
            else:
                self._spares.setdefault(workspace, []).append(session)
                evicted = self._trim_spares()
        for extra in evicted:
            extra.close()

    def _trim_spares(self) -> list[WorkerSession]:
        """Keep at most `size` spares, evicting the least recently used workspace's first."""
        evicted: list[WorkerSession] = []
        total = sum(len(v) for v in self._spares.values())
        for workspace in list(self._spares):
            while total > self.size and self._spares[workspace]:
                evicted.append(self._spares[workspace].pop())
                total -= 1
        return evicted

    def _new_session(
        self, workspace: str, session_id: str | None = None, parent_id: str | None = None
    ) -> WorkerSession:
        role = "child" if parent_id else "root"
        spawn = self.backend.spawner(session_id=session_id, role=role, parent_id=parent_id)
        session = WorkerSession(self.options, workspace, spawn=spawn)
        session.wait_ready()
        return session

    def prepare(self, session_id: str, workspace_id: str | None = None) -> None:
        """A turn of this session is about to lease its worker: have one ready (never blocks). Nothing to do when
        the session has one, or one is being prepared; backends without spares (Daytona) are left alone."""
        if not self.backend.keeps_spares:  # a remote sandbox started on speculation would be billed
            return
        workspace = workspace_id or self.options.workspace_id
        stale: list[WorkerSession] = []
        with self._lock:
            if self._closed or session_id in self._leases or session_id in self._preparing:
                return
            spare = self._take_spare(workspace, stale)
            others = bool(self._preparing)  # a burst of new sessions: spares made now would only be extra starts
            if spare is not None:
                self._leases[session_id] = _Lease(spare, busy=False)
            else:
                ready = self._preparing[session_id] = threading.Event()
                thread = threading.Thread(target=self._prepare, args=(session_id, workspace, ready), daemon=True)
                self._threads = [t for t in self._threads if t.is_alive()] + [thread]
                thread.start()  # under the lock, as prewarm's: a shutdown never finds it registered but unstarted
        for session in stale:
            session.close()
        if not others:
            self.prewarm(workspace)  # as a lease does: the workspace's next sessions find spares

    def _prepare(self, session_id: str, workspace: str, ready: threading.Event) -> None:
        session: WorkerSession | None = None
        keep = False
        try:
            session = self._new_session(workspace, session_id)
        except Exception as exc:  # the turn's own lease starts one and reports the failure
            logger.info("could not prepare a sandbox for session %s: %s", session_id, exc)
        finally:
            with self._lock:
                self._preparing.pop(session_id, None)
                keep = session is not None and not self._closed and session_id not in self._leases
                if keep:
                    self._leases[session_id] = _Lease(session, busy=False)  # type: ignore[arg-type]
            ready.set()
        if session is not None and not keep:
            session.close()

    # --- leases --------------------------------------------------------------------------------------------
    def lease(
        self, session_id: str | None, workspace_id: str | None = None, *, parent_id: str | None = None
    ) -> WorkerSession:
        """The session's warm worker, else a warm spare, else a cold start. Raises WorkerLost on failure.

        `session_id=None` is a one-off worker (closed on release); `parent_id` names the session whose child RLM
        it serves. A cold start is labelled with both (the Daytona backend finds session sandboxes again)."""
        workspace = workspace_id or self.options.workspace_id
        with self._lock:
            preparing = self._preparing.get(session_id) if session_id else None
        if preparing is not None:  # its worker is starting (`prepare`): take that one
            preparing.wait(self.options.startup_timeout_s)
        stale: list[WorkerSession] = []
        with self._lock:
            if self._closed:
                raise WorkerLost("the sandbox pool is shut down")
            lease = self._leases.get(session_id) if session_id else None
            if lease is not None and not lease.busy:
                if lease.session.alive() and lease.session.workspace_id == workspace:
                    lease.busy = True
                    return lease.session
                stale.append(self._leases.pop(session_id).session)  # type: ignore[arg-type]
            ephemeral = lease is not None and lease.busy
            spare = self._take_spare(workspace, stale)
        for session in stale:
            session.close()
        session = spare or self._new_session(workspace, session_id, parent_id)
        self.prewarm(workspace)
        if session_id and not ephemeral:
            with self._lock:
                self._leases[session_id] = _Lease(session)
        return session

    def _take_spare(self, workspace: str, stale: list[WorkerSession]) -> WorkerSession | None:
        spares = self._spares.get(workspace, [])
        while spares:
            candidate = spares.pop(0)
            if candidate.alive():
                return candidate
            stale.append(candidate)
        return None

    def release(self, session_id: str | None, session: WorkerSession) -> None:
        """End one use. A session's own worker stays warm; an ephemeral one is closed."""
        with self._lock:
            lease = self._leases.get(session_id) if session_id else None
            if lease is not None and lease.session is session and session.alive() and not self._closed:
                lease.busy = False
                lease.last_used, lease.used_wall = time.monotonic(), time.time()
                return
            if lease is not None and lease.session is session:
                del self._leases[session_id]  # type: ignore[arg-type]
        session.close()

    def discard(self, session_id: str | None, session: WorkerSession) -> None:
        """Forget a dead worker (the interpreter is replacing it)."""
        with self._lock:
            lease = self._leases.get(session_id) if session_id else None
            if lease is not None and lease.session is session:
                del self._leases[session_id]  # type: ignore[arg-type]
        session.close()

    def end_session(self, session_id: str) -> None:
        """Close a session's worker now (session deleted or finished)."""
        with self._lock:
            lease = self._leases.pop(session_id, None)
        if lease is not None:
            lease.session.close()

    # --- housekeeping --------------------------------------------------------------------------------------
    def _reap_loop(self) -> None:
        interval = min(max(self.idle_timeout_s / 4, 0.05), 5.0)
        while not self._stop.wait(interval):
            self.reap_idle()

    def reap_idle(self) -> int:
        now = time.monotonic()
        expired: list[WorkerSession] = []
        with self._lock:
            for session_id, lease in list(self._leases.items()):
                if not lease.busy and (now - lease.last_used > self.idle_timeout_s or not lease.session.alive()):
                    expired.append(self._leases.pop(session_id).session)
        for session in expired:
            session.close()
        return len(expired)

    def leases(self) -> list[LeaseInfo]:
        """The sessions holding a worker now (busy: a cell or turn is using it)."""
        with self._lock:
            items = list(self._leases.items())
        return [
            LeaseInfo(
                session_id=session_id,
                workspace_id=lease.session.workspace_id,
                started_at=lease.started_wall,
                last_used_at=lease.used_wall,
                busy=lease.busy,
                alive=lease.session.alive(),
            )
            for session_id, lease in items
        ]

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "spares": sum(len(v) for v in self._spares.values()),
                "starting": sum(self._starting.values()) + len(self._preparing),
                "leased": sum(1 for lease in self._leases.values() if lease.busy),
                "idle": sum(1 for lease in self._leases.values() if not lease.busy),
            }

    def shutdown(self) -> None:
        self._stop.set()
        with self._lock:
            self._closed = True
            sessions = [s for spares in self._spares.values() for s in spares]
            sessions += [lease.session for lease in self._leases.values()]
            self._spares.clear()
            self._leases.clear()
            starting = list(self._threads)
        for session in sessions:
            session.close()
        for thread in starting:  # a spare still starting closes itself once it sees `_closed`
            thread.join(timeout=self.options.startup_timeout_s)
