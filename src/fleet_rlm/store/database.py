"""`Database`: the engine and session factory the app holds for its lifetime, plus a health check.

The API owns one instance (built in its lifespan via `open_database`), hands sessions to repositories and
calls `dispose()` on shutdown. Nothing is created at import time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from alembic.runtime.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from fleet_rlm.store import migrate
from fleet_rlm.store.engine import create_engine, session_factory
from fleet_rlm.store.urls import Backend, backend_of, normalize_url


class Database:
    """Engine + sessionmaker for one URL. Repositories flush; callers own the transaction."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = normalize_url(url)
        self.backend: Backend = backend_of(self.url)
        self.engine: AsyncEngine = create_engine(self.url, echo=echo)
        self.sessionmaker: async_sessionmaker[AsyncSession] = session_factory(self.engine)

    def session(self) -> AsyncSession:
        """A new session (use as `async with db.session() as s:`); commit yourself."""
        return self.sessionmaker()

    @asynccontextmanager
    async def transaction(self, *, inline: bool = False) -> AsyncIterator[AsyncSession]:
        """A session inside a transaction: commits on success, rolls back on error.

        `inline`: on SQLite, the reads, and the statements after the first write, run in this thread, not in a
        hop through the event loop (`OneHopConnection.run_inline`). For short transactions that must not wait
        behind a busy loop (a turn's start, the event writer's); a long statement in one would stall the loop.
        A committed inline transaction also closes its session in this task (below): under a burst of 50 turn
        starts that let each start dispatch its sandbox's preparation at once, and the slowest turn of the burst
        went from ~1.6 to ~1.45 s (docs/performance.md).
        """
        if not inline or self.backend != "sqlite":
            async with self.sessionmaker() as session, session.begin():
                yield session
            return
        session = self.sessionmaker()
        try:
            async with session.begin():
                await self._run_inline(session)
                yield session
        except BaseException as exc:
            await session.__aexit__(type(exc), exc, exc.__traceback__)  # closes in a task of its own, shielded
            raise
        # Committed, its connection idle: closing makes no hop, so nothing here can be cut short. AsyncSession's
        # exit closes in a task of its own, which put each start of a burst behind every other queued start.
        await session.close()

    async def _run_inline(self, session: AsyncSession) -> None:
        if self.backend == "sqlite":
            raw = await (await session.connection()).get_raw_connection()
            driver: Any = raw.dbapi_connection  # a OneHopConnection (store/sqlite_driver.py)
            driver.run_inline()

    async def check(self) -> dict[str, Any]:
        """Health: never raises. Keys: backend, reachable, current, head, at_head, error."""
        code_head = migrate.head()
        result: dict[str, Any] = {
            "backend": self.backend,
            "reachable": False,
            "current": None,
            "head": code_head,
            "at_head": False,
            "error": None,
        }
        try:
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
                result["reachable"] = True
                current = await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_revision())
        except Exception as exc:  # health checks report, they do not raise
            result["error"] = f"{type(exc).__name__}: {exc}"
            return result
        result["current"] = current
        result["at_head"] = current == code_head
        return result

    async def dispose(self) -> None:
        await self.engine.dispose()


async def open_database(url: str, *, echo: bool = False, migration_attributes: migrate.Attributes = None) -> Database:
    """Open the database the startup way: SQLite migrates itself to head, Postgres must already be there.
    `migration_attributes` reach the migrations (see `migrate`).

    Raises SchemaBehindError / SchemaUnknownError (Postgres behind, or a schema newer than the code).
    """
    if backend_of(url) == "sqlite":
        await migrate.ensure_sqlite_schema_async(url, attributes=migration_attributes)
    else:
        await migrate.assert_at_head_async(url)
    return Database(url, echo=echo)
