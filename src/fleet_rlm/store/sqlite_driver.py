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
"""

from __future__ import annotations

import collections
import sqlite3
from typing import Any

import aiosqlite
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.util import EMPTY_DICT
from sqlalchemy.util.concurrency import await_

_Result = tuple[Any, list[Any], int, int | None]


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
        try:
            result = await_(connection._execute(_run_statement, connection._conn, operation, parameters, many))
        except Exception as error:  # sqlite3 errors, or aiosqlite's "no active connection"
            self._adapt_connection._handle_exception(error)
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
    __slots__ = ()
    _cursor_cls: type[AsyncAdapt_aiosqlite_cursor] = OneHopCursor


class OneHopDBAPI(AsyncAdapt_aiosqlite_dbapi):
    """The aiosqlite DBAPI shim whose connections hand out one-hop cursors."""

    def connect(self, *arg: Any, **kw: Any) -> OneHopConnection:
        adapted = super().connect(*arg, **kw)
        return OneHopConnection(self, adapted._connection)


def dbapi() -> OneHopDBAPI:
    return OneHopDBAPI(aiosqlite, sqlite3)
