"""`DatabasePrograms`: the runtime's ProgramRegistry over promoted program versions in the database.

The runtime asks for instructions synchronously from a turn's worker thread; the store is async. So `get`
runs the query on the server's event loop (`run_coroutine_threadsafe`) and caches the promoted set for a
couple of seconds, which keeps replicas in step with promotions without a query per program lookup. Called
on the loop thread itself (never by the runtime) it answers from the cache only.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from fleet_rlm.runtime.programs import ProgramSpec
from fleet_rlm.store import Database
from fleet_rlm.store.models import ProgramVersion
from fleet_rlm.store.repos import optimization as repo

log = logging.getLogger(__name__)
CACHE_TTL_S = 2.0
QUERY_TIMEOUT_S = 10.0


def specs_of(row: ProgramVersion) -> dict[str, ProgramSpec]:
    """Runtime module -> spec for one saved version (task/skill versions answer under their own name)."""
    program: Mapping[str, Any] = row.program or {}
    runtime = dict(program.get("runtime") or {})
    if not runtime:
        instructions = dict(program.get("instructions") or {})
        if instructions:
            runtime = {row.module: next(iter(instructions.values()))}
    return {module: ProgramSpec(module, row.version, str(text)) for module, text in runtime.items()}


class DatabasePrograms:
    def __init__(self, database: Database, loop: asyncio.AbstractEventLoop) -> None:
        self.database = database
        self.loop = loop
        self._lock = threading.Lock()
        self._promoted: dict[str, ProgramSpec] = {}
        self._loaded_at = float("-inf")

    async def refresh(self) -> None:
        """Reload the promoted set now (after a promotion or rollback, and at startup)."""
        async with self.database.session() as session:
            rows = await repo.promoted_versions(session)
        promoted: dict[str, ProgramSpec] = {}
        for row in rows:
            promoted.update(specs_of(row))
        with self._lock:
            self._promoted, self._loaded_at = promoted, time.monotonic()

    async def _pinned(self, version: str) -> dict[str, ProgramSpec]:
        async with self.database.session() as session:
            row = await repo.find_version(session, version=version)
        return specs_of(row) if row is not None else {}

    def _on_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(QUERY_TIMEOUT_S)

    def get(self, module: str, version: str | None = None) -> ProgramSpec | None:
        """The module's spec at `version` (None: the promoted one); None lets the runtime use its built-in."""
        if version is not None:
            if self._on_loop():
                return None
            try:
                return self._run(self._pinned(version)).get(module)  # type: ignore[no-any-return]
            except Exception as exc:
                log.warning("could not load program version %s: %s", version, exc)
                return None
        if not self._on_loop() and time.monotonic() - self._loaded_at > CACHE_TTL_S:
            try:
                self._run(self.refresh())
            except Exception as exc:  # a database hiccup falls back to the last known promoted set
                log.warning("could not refresh promoted programs: %s", exc)
        with self._lock:
            return self._promoted.get(module)
