"""`DatabasePrograms`: the runtime's ProgramRegistry over program versions in the database, and `program_pins`,
which versions one user's turns run.

Versions are per user: the API pins each turn to the caller's versions (`program_pins`: their own promotion of a
module, else the global one) through `TurnRequest.program_versions`, and the runtime asks the registry for those
pinned labels. A label's content never changes, so looked-up versions are cached for good. `get(module)` without
a version answers the global promotion only (refreshed every couple of seconds, and after a promotion or
rollback here), so a caller that pins nothing never runs another user's version.

The runtime asks synchronously from a turn's worker thread; the store is async. So lookups run on the server's
event loop (`run_coroutine_threadsafe`). Called on the loop thread itself (never by the runtime) the registry
answers from its caches only.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.runtime.programs import ProgramSpec
from fleet_rlm.store import Database
from fleet_rlm.store.models import ProgramVersion
from fleet_rlm.store.repos import programs as repo

log = logging.getLogger(__name__)
CACHE_TTL_S = 2.0
QUERY_TIMEOUT_S = 10.0
MAX_CACHED_VERSIONS = 512


def specs_of(row: ProgramVersion) -> dict[str, ProgramSpec]:
    """Runtime module -> spec for one saved version (task/skill versions answer under their own name)."""
    program: Mapping[str, Any] = row.program or {}
    runtime = dict(program.get("runtime") or {})
    if not runtime:
        instructions = dict(program.get("instructions") or {})
        if instructions:
            runtime = {row.module: next(iter(instructions.values()))}
    return {module: ProgramSpec(module, row.version, str(text)) for module, text in runtime.items()}


async def program_pins(session: AsyncSession, *, user_id: str) -> dict[str, str]:
    """Runtime module -> version label the user's turns run (own promotion over global; absent: built-in)."""
    pins: dict[str, str] = {}
    for row in (await repo.in_effect(session, user_id=user_id)).values():
        for module, spec in specs_of(row).items():
            pins[module] = spec.version
    return pins


class DatabasePrograms:
    def __init__(self, database: Database, loop: asyncio.AbstractEventLoop) -> None:
        self.database = database
        self.loop = loop
        self._lock = threading.Lock()
        self._global: dict[str, ProgramSpec] = {}
        self._versions: dict[str, dict[str, ProgramSpec]] = {}
        self._loaded_at = float("-inf")
        self._refreshing: concurrent.futures.Future[None] | None = None  # the one refresh turn threads wait for

    async def refresh(self) -> None:
        """Reload the global promoted set now (after a promotion or rollback, and at startup)."""
        async with self.database.session() as session:
            rows = await repo.in_effect(session, user_id=None)
        promoted: dict[str, ProgramSpec] = {}
        for row in rows.values():
            promoted.update(specs_of(row))
        with self._lock:
            self._global, self._loaded_at = promoted, time.monotonic()

    async def _pinned(self, version: str) -> dict[str, ProgramSpec]:
        async with self.database.session() as session:
            row = await repo.find_version(session, version=version)
        specs = specs_of(row) if row is not None else {}
        if specs:
            with self._lock:
                if len(self._versions) >= MAX_CACHED_VERSIONS:
                    self._versions.clear()
                self._versions[version] = specs
        return specs

    def _on_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(QUERY_TIMEOUT_S)

    def get(self, module: str, version: str | None = None) -> ProgramSpec | None:
        """The module's spec at `version` (None: the global promotion); None lets the runtime use its built-in."""
        if version is not None:
            with self._lock:
                cached = self._versions.get(version)
            if cached is not None or self._on_loop():
                return (cached or {}).get(module)
            try:
                return self._run(self._pinned(version)).get(module)  # type: ignore[no-any-return]
            except Exception as exc:
                log.warning("could not load program version %s: %s", version, exc)
                return None
        if not self._on_loop() and time.monotonic() - self._loaded_at > CACHE_TTL_S:
            try:
                self._stale_refresh().result(QUERY_TIMEOUT_S)
            except Exception as exc:  # a database hiccup falls back to the last known promoted set
                log.warning("could not refresh promoted programs: %s", exc)
        with self._lock:
            return self._global.get(module)

    def _stale_refresh(self) -> concurrent.futures.Future[None]:
        """The refresh in flight, else a new one: a burst of turns that find the set stale together wait for one
        refresh (each started its own: 50 at the start of a 50-turn burst, ~15% of the API's CPU then)."""
        with self._lock:
            if self._refreshing is None or self._refreshing.done():
                self._refreshing = asyncio.run_coroutine_threadsafe(self.refresh(), self.loop)
            return self._refreshing
