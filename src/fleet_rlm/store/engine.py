"""Async engine and session factory.

SQLite gets WAL (readers never block the writer), enforced foreign keys (off by default in SQLite) and a busy
timeout so concurrent writers queue instead of failing with "database is locked", and a statement costs one
round trip to aiosqlite's thread (store/sqlite_driver.py). Postgres gets a bounded, pre-pinged pool so a
restarted database does not hand out dead connections.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.ext.asyncio import create_async_engine as _create_async_engine
from sqlalchemy.pool import NullPool

from fleet_rlm.store.urls import backend_of, normalize_url

SQLITE_BUSY_TIMEOUT_MS = 30_000


def _use_wal(cursor: Any) -> bool:
    """Switch the file to WAL once (the mode persists); says whether it is in WAL mode (a file system without
    shared memory keeps its journal). The switch does not wait on the busy handler when another connection holds
    the file, so processes starting together on a fresh file retry it briefly."""
    import time

    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode")
            row = cursor.fetchone()
            if row and str(row[0]).lower() == "wal":
                return True
            cursor.execute("PRAGMA journal_mode=WAL")
            row = cursor.fetchone()
            return bool(row) and str(row[0]).lower() == "wal"
        except Exception as exc:  # the driver's OperationalError; only lock contention is retried
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if _use_wal(cursor) and hasattr(dbapi_connection, "wal"):
            dbapi_connection.wal = True  # a OneHopConnection may run statements inline (store/sqlite_driver.py)
            cursor.execute("PRAGMA wal_autocheckpoint=0")  # its commits never checkpoint (store/sqlite_checkpoint.py)
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


IDLE_IN_TRANSACTION_MS = 10_000


def create_engine(url: str, *, echo: bool = False, pooled: bool = True) -> AsyncEngine:
    """An AsyncEngine for `url` (sqlite or postgresql; sync driver names are upgraded to async ones).

    `pooled=False` gives a NullPool engine for one-off work such as migrations.
    """
    url = normalize_url(url)
    backend = backend_of(url)
    kwargs: dict[str, Any] = {"echo": echo}
    if not pooled:
        kwargs["poolclass"] = NullPool
    elif backend == "postgresql":
        kwargs.update(pool_size=5, max_overflow=10, pool_pre_ping=True, pool_recycle=1800)
        # a process frozen inside a transaction (SIGSTOP, a paused VM) must not hold its rows' locks forever: the
        # sweeper that interrupts its runs would wait on them. Our transactions are short; Postgres ends one left
        # idle this long and the frozen process's writes then fail (and its claim is gone anyway).
        settings = {"idle_in_transaction_session_timeout": str(IDLE_IN_TRANSACTION_MS)}
        kwargs["connect_args"] = {"server_settings": settings}
    if backend == "sqlite":
        from fleet_rlm.store.sqlite_driver import dbapi

        kwargs["module"] = dbapi()
    engine = _create_async_engine(url, **kwargs)
    if backend == "sqlite":
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    return engine


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions that keep loaded attributes after commit (async code cannot lazy-load expired ones)."""
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)
