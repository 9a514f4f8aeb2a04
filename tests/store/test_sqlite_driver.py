"""The one-hop SQLite cursor (store/sqlite_driver.py): every statement shape the store uses behaves as through
SQLAlchemy's own aiosqlite adapter, in one round trip to aiosqlite's thread."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from sqlalchemy import func, insert, select, text, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import col

from fleet_rlm.store import Database, migrate
from fleet_rlm.store.models import RunEvent, User
from fleet_rlm.store.repos import events, runs, sessions, users
from fleet_rlm.store.sqlite_driver import OneHopCursor


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'fleet.db'}"
    migrate.ensure_sqlite_schema(url)
    database = Database(url)
    try:
        yield database
    finally:
        await database.dispose()


async def _driver(session: Any) -> aiosqlite.Connection:
    connection = await session.connection()
    raw = await connection.get_raw_connection()
    return raw.driver_connection


def test_aiosqlite_still_offers_what_the_cursor_uses() -> None:
    """An aiosqlite upgrade that renames these breaks every statement: this says so by name."""
    assert callable(getattr(aiosqlite.Connection, "_execute", None))
    assert isinstance(aiosqlite.Connection.__dict__.get("_conn"), property)


async def test_the_engine_hands_out_one_hop_cursors_and_each_statement_is_one_hop(sqlite_db: Database) -> None:
    async with sqlite_db.transaction() as session:
        driver = await _driver(session)
        connection = await session.connection()
        raw = await connection.get_raw_connection()
        assert isinstance(raw.dbapi_connection.cursor(), OneHopCursor)
        hops: list[str] = []
        original = driver._execute

        async def counted(fn: Any, *args: Any, **kwargs: Any) -> Any:
            hops.append(getattr(fn, "__name__", "?"))
            return await original(fn, *args, **kwargs)

        driver._execute = counted  # type: ignore[method-assign]  # this one aiosqlite connection, not our code
        try:
            user = await users.get_or_create_user(session, name="alice")
            before = len(hops)
            await session.execute(select(User).where(col(User.id) == user.id))
            assert len(hops) - before == 1
            before = len(hops)
            await session.execute(update(User).where(col(User.id) == user.id).values(display_name="A"))
            assert len(hops) - before == 1
        finally:
            driver._execute = original  # type: ignore[method-assign]


async def test_rows_rowcount_lastrowid_and_executemany_come_back_as_before(sqlite_db: Database) -> None:
    async with sqlite_db.transaction() as session:
        user = await users.get_or_create_user(session, name="alice")
        chat = await sessions.create_session(session, user_id=user.id, title="t")
        run, _ = await runs.create_run(session, user_id=user.id, session_id=chat.id)
        appended = await events.append_event(session, run_id=run.id, type="status", payload={"i": 0})
        assert appended.id is not None  # the integer key came back (lastrowid or RETURNING)
        rows = [
            {
                "run_id": run.id,
                "seq": i,
                "type": "status",
                "ts": appended.ts,
                "depth": 0,
                "actor": "root",
                "payload": {},
            }
            for i in range(2, 7)
        ]
        result: Any = await session.execute(insert(RunEvent.__table__), rows)  # type: ignore[attr-defined]
        assert result.rowcount == 5
        result = await session.execute(update(User).where(col(User.name) == "nobody").values(display_name="x"))
        assert result.rowcount == 0
        result = await session.execute(update(User).where(col(User.id) == user.id).values(display_name="A"))
        assert result.rowcount == 1
        count = (await session.execute(select(func.count()).select_from(RunEvent))).scalar_one()
        assert count == 6
        listed = await events.list_events(session, run_id=run.id, limit=100)
        assert [e.seq for e in listed] == [1, 2, 3, 4, 5, 6]
        mapped = (await session.execute(text("SELECT name, display_name FROM users"))).mappings().all()
        assert [dict(m) for m in mapped] == [{"name": "alice", "display_name": "A"}]
        streamed = [row async for row in await session.stream(select(RunEvent.seq).order_by(col(RunEvent.seq)))]
        assert [row[0] for row in streamed] == [1, 2, 3, 4, 5, 6]  # server-side cursors keep the stock path


async def test_errors_surface_as_sqlalchemy_errors_and_the_connection_stays_usable(sqlite_db: Database) -> None:
    with pytest.raises(IntegrityError):
        async with sqlite_db.transaction() as session:
            await session.execute(text("INSERT INTO users (id, name, settings) VALUES ('u1', 'bob', '{}')"))
            await session.execute(text("INSERT INTO users (id, name, settings) VALUES ('u1', 'bob2', '{}')"))
    with pytest.raises(OperationalError):
        async with sqlite_db.session() as session:
            await session.execute(text("SELECT no_such_column FROM users"))
    async with sqlite_db.session() as session:  # the rolled-back insert left nothing; the pool still works
        assert (await session.execute(text("SELECT count(*) FROM users"))).scalar_one() == 0
