"""SQLite through aiosqlite in one thread hop per statement instead of three or four.

SQLAlchemy's aiosqlite adapter awaits aiosqlite for each DBAPI call of a statement (make a cursor, execute,
fetch the rows, close the cursor); every await is a round trip to aiosqlite's thread and back through the event
loop, about 100 us each on our machines, which made a statement cost ~430 us where the SQLite work is ~100 us.
This cursor sends one function to that thread that does all of it and brings back the rows, description,
rowcount and lastrowid; everything else (connections, transactions, errors, server-side cursors) is
SQLAlchemy's adapter unchanged. The engine passes it as the dialect's DBAPI module (`create_engine(module=...)`),
so URLs stay `sqlite+aiosqlite://`.

It reaches into aiosqlite's `Connection._execute` (run a function on the connection's thread) and `_conn`, as
SQLAlchemy's own adapter does for its isolation-level setter; tests/store/test_sqlite_driver.py pins what it
relies on, and uv.lock pins the versions.

Writers of one file in this process queue on an asyncio lock (`WriteGate`) instead of on SQLite's lock. SQLite
lets one connection write at a time, and a connection that finds the lock taken sleeps in its busy handler
(1, 2, 5, 10 ... up to 100 ms a try) however soon the lock frees: under a burst of turn starts a start's first
INSERT waited up to 0.9 s with 0.3 ms of work. A connection takes the gate at its first write statement (as
SQLite takes its lock) and gives it back at commit, rollback or close, so the order of the lock is the order of
arrival and a writer runs as soon as the previous one ends. Other processes still meet SQLite's own lock;
waiting for the gate longer than `GATE_TIMEOUT_S` falls back to it.
"""

from __future__ import annotations

import asyncio
import collections
import sqlite3
import weakref
from typing import Any

import aiosqlite
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.util import EMPTY_DICT
from sqlalchemy.util.concurrency import await_

from fleet_rlm.store.sqlite_checkpoint import checkpointer

_Result = tuple[Any, list[Any], int, int | None]

GATE_TIMEOUT_S = 10.0
_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER", "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE")
_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = weakref.WeakKeyDictionary()


def _is_write(operation: str) -> bool:
    return operation.lstrip()[:15].upper().startswith(_WRITES)


def _gate(database: str) -> asyncio.Lock:
    """The write gate of `database` for the running loop (an asyncio lock belongs to one loop)."""
    per_loop = _gates.setdefault(asyncio.get_running_loop(), {})
    return per_loop.setdefault(database, asyncio.Lock())


async def _enter(gate: asyncio.Lock) -> bool:
    try:
        await asyncio.wait_for(gate.acquire(), GATE_TIMEOUT_S) if gate.locked() else await gate.acquire()
    except TimeoutError:
        return False  # SQLite's busy handler decides from here
    return True


def _run_statement(conn: sqlite3.Connection, operation: str, parameters: Any, many: bool) -> _Result:
    """On aiosqlite's thread: the whole statement, rows included (what the adapter did in several hops)."""
    cursor = conn.cursor()
    try:
        if many:
            cursor.executemany(operation, parameters)
        else:
            cursor.execute(operation, () if parameters is None else parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else []
        return description, rows, cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


def _run_unless_busy(conn: sqlite3.Connection, operation: str, parameters: Any, many: bool) -> _Result | None:
    """In the caller's thread, the first write of a transaction that holds this process's gate: only another
    process can hold SQLite's write lock then, so SQLite answers busy at once (no busy-handler sleeps here) and
    None sends the statement to aiosqlite's thread to wait there. Only outside a transaction: the one this write
    begins, rolled back on a busy answer, holds nothing (a kept read snapshot could never upgrade)."""
    if conn.in_transaction:
        return None
    timeout = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute("PRAGMA busy_timeout=0")
    try:
        return _run_statement(conn, operation, parameters, many)
    except sqlite3.OperationalError as error:
        if getattr(error, "sqlite_errorcode", 0) & 0xFF != sqlite3.SQLITE_BUSY:
            raise
        if conn.in_transaction:
            conn.rollback()
        return None
    finally:
        conn.execute(f"PRAGMA busy_timeout={int(timeout)}")


class OneHopCursor(AsyncAdapt_aiosqlite_cursor):
    """A buffered cursor whose results arrive with its one hop; closing it costs nothing."""

    __slots__ = ("_description", "_lastrowid", "_rowcount")

    def __init__(self, adapt_connection: AsyncAdapt_aiosqlite_connection) -> None:  # no hop to make a cursor
        self._adapt_connection = adapt_connection
        self._connection = adapt_connection._connection
        self._soft_closed_memoized = EMPTY_DICT
        self._rows = collections.deque()
        self._description: Any = None
        self._rowcount = -1
        self._lastrowid: int | None = None

    @property
    def description(self) -> Any:
        return self._description

    @property
    def rowcount(self) -> int:
        return self._rowcount

    @property
    def lastrowid(self) -> Any:
        return self._lastrowid

    @property
    def arraysize(self) -> int:
        return 1

    @arraysize.setter
    def arraysize(self, value: int) -> None:  # rows are buffered already; fetchmany sizes are the caller's
        pass

    def _run(self, operation: Any, parameters: Any, many: bool) -> None:
        connection: Any = self._connection  # an aiosqlite.Connection
        adapted: Any = self._adapt_connection
        if adapted._inline and adapted._locked:  # the write lock is held: nothing left to wait for, no hop
            inline, write = True, False
        else:
            write = (adapted._inline or adapted._held is None) and _is_write(operation)
            inline = adapted._inline and not write  # a WAL reader waits for no writer: no hop either
        if write and adapted._database is not None and adapted._held is None:
            gate = _gate(adapted._database)
            adapted._held = gate if await_(_enter(gate)) else None
        try:
            result = None
            if inline:
                result = _run_statement(connection._conn, operation, parameters, many)
            elif write and adapted._inline and adapted._held is not None:  # the first write, this process's turn
                result = _run_unless_busy(connection._conn, operation, parameters, many)
            if result is None:
                result = await_(connection._execute(_run_statement, connection._conn, operation, parameters, many))
        except Exception as error:  # sqlite3 errors, or aiosqlite's "no active connection"
            self._adapt_connection._handle_exception(error)
        if write and adapted._inline:
            adapted._locked = connection._conn.in_transaction
        self._description, rows, self._rowcount, self._lastrowid = result
        self._rows = collections.deque(rows)

    def execute(self, operation: Any, parameters: Any = None) -> None:
        self._run(operation, parameters, False)

    def executemany(self, operation: Any, seq_of_parameters: Any) -> None:
        self._run(operation, seq_of_parameters, True)

    async def _async_soft_close(self) -> None:
        return None

    def close(self) -> None:
        self._rows.clear()


class OneHopConnection(AsyncAdapt_aiosqlite_connection):
    __slots__ = ("_database", "_held", "_inline", "_locked", "wal")
    _cursor_cls: type[AsyncAdapt_aiosqlite_cursor] = OneHopCursor

    def __init__(self, dbapi: Any, connection: Any, database: str | None = None) -> None:
        super().__init__(dbapi, connection)
        self._database = None if database in (None, "", ":memory:") else database  # a private database: no gate
        self._held: asyncio.Lock | None = None  # the gate, from the first write statement to the transaction's end
        self._inline = False  # reads, and writes once the lock is held, run in the caller's thread (run_inline)
        self._locked = False  # a write statement of the open transaction succeeded: SQLite's write lock is ours
        self.wal = False  # the file is in WAL mode (the engine's connect hook says so; store/engine.py)

    def run_inline(self) -> None:
        """Until this transaction ends, run its statements and its commit in the caller's thread instead of a hop
        each to aiosqlite's: a WAL reader waits for no writer, a statement holding the write lock waits for
        nothing, and under load every hop waits for the busy event loop to come round: the event writer's ~10
        statements a transaction took 30-100 ms that way, a burst of 50 turn starts queued ~20 ms each on the
        gate, held across two hops, and the commit's hop alone cost ~2 ms of the API's CPU a turn
        (docs/performance.md). A commit never checkpoints on our connections (the engine turns SQLite's
        auto-checkpoint off; `sqlite_checkpoint` does it on a thread of its own). Only what may wait hops: a
        first write that finds another process holding SQLite's lock (`_run_unless_busy`). Only in WAL mode:
        with a rollback journal a statement may wait for readers (to spill), and a reader for a writer."""
        self._inline = self.wal

    def _leave(self) -> None:
        held, self._held = self._held, None
        self._inline = self._locked = False
        if held is not None:
            held.release()

    def _idle(self) -> bool:
        """No transaction is open on the connection, so sqlite3's commit or rollback would do nothing: skip their
        hop. A read-only session and every pool checkin (which rolls back) end this way: ~4 hops a turn."""
        raw = self._connection._connection  # the sqlite3 connection; None once closed
        return raw is not None and not raw.in_transaction

    def commit(self) -> None:
        try:
            if self._idle():
                return
            if self._inline and self._locked:  # holds the write lock: waits for nothing, and never checkpoints
                try:
                    self._connection._conn.commit()
                except Exception as error:
                    self._handle_exception(error)
            else:
                super().commit()
            if self.wal and self._database is not None:
                checkpointer.after_commit(self._database)
        finally:
            self._leave()

    def rollback(self) -> None:
        try:
            if not self._idle():
                super().rollback()
        finally:
            self._leave()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._leave()

    def terminate(self) -> None:
        try:
            super().terminate()
        finally:
            self._leave()


class OneHopDBAPI(AsyncAdapt_aiosqlite_dbapi):
    """The aiosqlite DBAPI shim whose connections hand out one-hop cursors."""

    def connect(self, *arg: Any, **kw: Any) -> OneHopConnection:
        adapted = super().connect(*arg, **kw)
        database = arg[0] if arg else kw.get("database")
        return OneHopConnection(self, adapted._connection, str(database) if database is not None else None)


def dbapi() -> OneHopDBAPI:
    return OneHopDBAPI(aiosqlite, sqlite3)
