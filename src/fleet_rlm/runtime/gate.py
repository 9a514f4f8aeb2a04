"""`TurnGate`: at most one active turn per session, in this process (the API adds the database-level check)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from fleet_rlm.runtime.errors import TurnAlreadyRunning


class TurnGate:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, str] = {}

    def acquire(self, session_id: str, run_id: str) -> None:
        """Claim the session for `run_id`; raises TurnAlreadyRunning naming the run that holds it."""
        with self._lock:
            current = self._running.get(session_id)
            if current is not None and current != run_id:
                raise TurnAlreadyRunning(session_id, current)
            self._running[session_id] = run_id

    def release(self, session_id: str, run_id: str) -> None:
        with self._lock:
            if self._running.get(session_id) == run_id:
                del self._running[session_id]

    def running(self, session_id: str) -> str | None:
        with self._lock:
            return self._running.get(session_id)

    def active(self) -> dict[str, str]:
        """session_id -> run_id of every running turn."""
        with self._lock:
            return dict(self._running)

    @contextmanager
    def hold(self, session_id: str, run_id: str) -> Iterator[None]:
        self.acquire(session_id, run_id)
        try:
            yield
        finally:
            self.release(session_id, run_id)
