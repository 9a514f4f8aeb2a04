"""`DaytonaBackend`: which sandbox a worker runs in, and which sandboxes to delete when.

Policy:
- A worker for a *session* (reuse on) runs in that session's sandbox, found again by labels
  `{"fleet-rlm": "1", "session": <id>, "workspace": <id>}` (started again if auto-stop stopped it). Such a
  sandbox is kept when its workers end and at shutdown; Daytona's auto-stop/auto-delete reclaim it later.
- Any other worker (reuse off: one-off interpreters, child RLMs) gets a sandbox of its own, deleted as soon
  as its worker ends, and at the latest when the backend shuts down.
One backend owns one `DaytonaClient` (and so one event loop thread); `shared_backend()` hands out one per
configuration so every factory of a server process shares it, and `shutdown_backends()` runs at exit.
"""

from __future__ import annotations

import atexit
import functools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from daytona import AsyncSandbox

from fleet_rlm.sandbox.daytona.client import DaytonaClient, DaytonaUnavailable
from fleet_rlm.sandbox.daytona.context import SandboxContext, ensure_context_dir, sync_context
from fleet_rlm.sandbox.daytona.options import LABEL_APP, DaytonaOptions
from fleet_rlm.sandbox.daytona.remote import DaytonaWorker, ensure_worker_files, start_worker
from fleet_rlm.sandbox.daytona.status import daytona_status
from fleet_rlm.sandbox.instructions import daytona_instructions
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.roots import GUEST_ROOT

logger = logging.getLogger(__name__)


def sandbox_labels(
    workspace_id: str, session_id: str | None = None, role: str = "root", parent_id: str | None = None
) -> dict[str, str]:
    labels = {LABEL_APP: "1", "workspace": workspace_id, "role": role}
    if session_id:
        labels["session"] = session_id
    if parent_id:
        labels["parent"] = parent_id
    return labels


@dataclass
class _Sandbox:
    sandbox: AsyncSandbox
    keep: bool
    worker_dir: str | None = None
    context: SandboxContext | None = None
    workers: set[str] = field(default_factory=set)
    context_lock: threading.Lock = field(default_factory=threading.Lock)


class DaytonaBackend:
    """The Daytona `SandboxBackend`: workers in Daytona sandboxes; isolation is Daytona's, never host bubblewrap."""

    name = "daytona"
    keeps_spares = False  # sandboxes are found again by label instead; a spare would be a billed, idle sandbox

    def __init__(self, options: DaytonaOptions, *, client: DaytonaClient | None = None) -> None:
        self.options = options
        self.client = client or DaytonaClient(options)
        self._lock = threading.Lock()
        self._sandboxes: dict[str, _Sandbox] = {}
        self._workers: dict[str, DaytonaWorker] = {}
        self._session_locks: dict[tuple[str | None, str], threading.Lock] = {}
        self._closed = False

    # --- spawning ------------------------------------------------------------------------------------------
    def spawner(
        self,
        *,
        session_id: str | None = None,
        role: str = "root",
        parent_id: str | None = None,
        reuse: bool | None = None,
    ) -> Callable[[SandboxOptions, str | None], DaytonaWorker]:
        """A `Spawn` for `WorkerSession`/`SandboxPool`. `reuse` defaults to on when a session id is given."""
        keep = bool(session_id) if reuse is None else reuse

        def spawn(options: SandboxOptions, workspace_id: str | None = None) -> DaytonaWorker:
            workspace = workspace_id or options.workspace_id
            labels = sandbox_labels(workspace, session_id, role, parent_id)
            return self.spawn(options, workspace, labels=labels, reuse=keep)

        return spawn

    def isolation(self, options: SandboxOptions) -> str:
        """Every sandbox is a Daytona sandbox: nothing on this host is needed (`require_isolation` is met)."""
        del options
        return "daytona"

    def instructions(self, options: SandboxOptions, workspace_id: str) -> str:
        del workspace_id  # the volume subpath of the workspace is mounted at the same guest path for all
        return daytona_instructions(options, GUEST_ROOT)

    def spawn(
        self, options: SandboxOptions, workspace_id: str, *, labels: dict[str, str], reuse: bool = False
    ) -> DaytonaWorker:
        if self._closed:
            raise DaytonaUnavailable("the Daytona backend is shut down", code="daytona_closed")
        for attempt in (1, 2):
            entry = self._sandbox_for(labels, workspace_id, reuse=reuse, fresh=attempt > 1)
            try:
                if entry.worker_dir is None:
                    entry.worker_dir = ensure_worker_files(self.client, entry.sandbox)
                if entry.context is None:
                    entry.context = SandboxContext(ensure_context_dir(self.client, entry.sandbox))
                worker = start_worker(
                    self.client,
                    entry.sandbox,
                    entry.worker_dir,
                    options,
                    on_exit=self._worker_ended,
                    context_dir=entry.context.guest_dir,
                    on_attach=functools.partial(self._attach, entry, options),
                )
            except DaytonaUnavailable:
                if entry.keep and attempt == 1:  # e.g. auto-stopped since we last used it: look it up again
                    self._forget(entry)
                    continue
                self._release_if_idle(entry)
                raise
            with self._lock:
                entry.workers.add(worker.session_id)
                self._workers[worker.session_id] = worker
            return worker
        raise AssertionError("unreachable")

    def _sandbox_for(self, labels: dict[str, str], workspace_id: str, *, reuse: bool, fresh: bool) -> _Sandbox:
        """The session's sandbox (one lookup/creation at a time per session), or a new one-off sandbox."""
        if not reuse:
            return self._track(self.client.create_sandbox(labels, workspace_id), keep=False)
        key = (labels.get("session"), workspace_id)
        with self._lock:
            key_lock = self._session_locks.setdefault(key, threading.Lock())
        with key_lock:
            entry = self._reusable(labels, fresh=fresh)
            if entry is None:
                entry = self._track(self.client.create_sandbox(labels, workspace_id), keep=True)
            return entry

    def _reusable(self, labels: dict[str, str], *, fresh: bool = False) -> _Sandbox | None:
        wanted = {k: labels[k] for k in (LABEL_APP, "session", "workspace") if k in labels}
        with self._lock:
            for entry in [] if fresh else self._sandboxes.values():
                if entry.keep and all(entry.sandbox.labels.get(k) == v for k, v in wanted.items()):
                    return entry
        found = self.client.find_sandbox(wanted)
        return self._track(found, keep=True) if found is not None else None

    def _track(self, sandbox: AsyncSandbox, *, keep: bool) -> _Sandbox:
        with self._lock:
            entry = self._sandboxes.get(sandbox.id)
            if entry is None:
                entry = self._sandboxes[sandbox.id] = _Sandbox(sandbox, keep)
            return entry

    def _forget(self, entry: _Sandbox) -> None:
        with self._lock:
            if self._sandboxes.get(entry.sandbox.id) is entry:
                del self._sandboxes[entry.sandbox.id]

    def _attach(self, entry: _Sandbox, options: SandboxOptions, session_id: str) -> None:
        """Give the sandbox `session_id`'s context (its only session; see `context.py`)."""
        assert entry.context is not None
        with entry.context_lock:
            sync_context(self.client, entry.sandbox, entry.context, options.data_dir, session_id)

    # --- release -------------------------------------------------------------------------------------------
    def _worker_ended(self, worker: DaytonaWorker) -> None:
        with self._lock:
            self._workers.pop(worker.session_id, None)
            entry = self._sandboxes.get(worker.sandbox_id)
            if entry is not None:
                entry.workers.discard(worker.session_id)
        if entry is not None:
            self._release_if_idle(entry)

    def _release_if_idle(self, entry: _Sandbox) -> None:
        with self._lock:
            if entry.keep or entry.workers or self._sandboxes.get(entry.sandbox.id) is not entry:
                return
            del self._sandboxes[entry.sandbox.id]
        try:
            self.client.delete_sandbox(entry.sandbox)
        except DaytonaUnavailable as exc:  # auto-delete reclaims it eventually
            logger.warning("could not delete Daytona sandbox %s: %s", entry.sandbox.id, exc.message)

    def sandbox_ids(self) -> dict[str, bool]:
        """Sandboxes this backend holds: id -> kept for reuse."""
        with self._lock:
            return {sid: entry.keep for sid, entry in self._sandboxes.items()}

    def shutdown(self) -> None:
        """Stop every worker, delete every sandbox we created that is not kept for reuse, close the client."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            workers = list(self._workers.values())
        for worker in workers:
            worker.kill()
        with self._lock:
            leftovers = [e for e in self._sandboxes.values() if not e.keep]
            self._sandboxes.clear()
        for entry in leftovers:
            try:
                self.client.delete_sandbox(entry.sandbox)
            except DaytonaUnavailable as exc:
                logger.warning("could not delete Daytona sandbox %s: %s", entry.sandbox.id, exc.message)
        self.client.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def status(self, options: SandboxOptions | None = None) -> dict[str, Any]:
        """The configuration (`daytona_status`, no network call) and what this backend holds now."""
        del options
        with self._lock:
            kept = sum(1 for e in self._sandboxes.values() if e.keep)
            held = {"sandboxes": len(self._sandboxes), "kept": kept, "workers": len(self._workers)}
        return {**daytona_status(self.options), **held}


_shared: dict[DaytonaOptions, DaytonaBackend] = {}
_shared_lock = threading.Lock()


def shared_backend(options: DaytonaOptions) -> DaytonaBackend:
    """The process-wide backend for this configuration (created on first use)."""
    with _shared_lock:
        backend = _shared.get(options)
        if backend is None or backend.closed:
            backend = _shared[options] = DaytonaBackend(options)
        return backend


def shutdown_backends() -> None:
    with _shared_lock:
        backends = list(_shared.values())
        _shared.clear()
    for backend in backends:
        try:
            backend.shutdown()
        except Exception as exc:  # at exit: report, never raise
            logger.warning("Daytona backend shutdown failed: %s", exc)


atexit.register(shutdown_backends)
