"""The one-hop SQLite cursor (store/sqlite_driver.py): every statement shape the store uses behaves as through
SQLAlchemy's own aiosqlite adapter, in one round trip to aiosqlite's thread."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
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


def _count_hops(driver: aiosqlite.Connection) -> tuple[list[str], Any]:
    """Record the name of every function this one aiosqlite connection runs on its thread (a hop); the second
    item puts the connection back as it was."""
    hops: list[str] = []
    original = driver._execute

    async def counted(fn: Any, *args: Any, **kwargs: Any) -> Any:
        hops.append(getattr(fn, "__name__", "?"))
        return await original(fn, *args, **kwargs)

    driver._execute = counted  # type: ignore[method-assign]  # this one aiosqlite connection, not our code

    def restore() -> None:
        driver._execute = original  # type: ignore[method-assign]

    return hops, restore


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
        hops, restore = _count_hops(driver)
        try:
            user = await users.get_or_create_user(session, name="alice")
            before = len(hops)
            await session.execute(select(User).where(col(User.id) == user.id))
            assert len(hops) - before == 1
            before = len(hops)
            await session.execute(update(User).where(col(User.id) == user.id).values(display_name="A"))
            assert len(hops) - before == 1
        finally:
            restore()


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


async def test_ending_a_transaction_that_wrote_nothing_costs_no_hop(sqlite_db: Database) -> None:
    """Commit and rollback go to aiosqlite's thread only when SQLite has a transaction open: a read-only
    session's end and the pool's rollback at checkin are free; a write still commits or rolls back for real."""
    async with sqlite_db.transaction() as session:
        user_id = (await users.get_or_create_user(session, name="alice")).id
    async with sqlite_db.transaction() as session:
        hops, restore = _count_hops(await _driver(session))
        await session.execute(select(User).where(col(User.id) == user_id))
    assert len(hops) == 1  # the SELECT; neither the commit nor the checkin's rollback crossed
    async with sqlite_db.session() as session:
        await session.execute(update(User).where(col(User.id) == user_id).values(display_name="gone"))
        await session.rollback()
        await session.execute(update(User).where(col(User.id) == user_id).values(display_name="kept"))
        await session.commit()
    restore()
    async with sqlite_db.session() as session:
        row = (await session.execute(select(User.display_name).where(col(User.id) == user_id))).scalar_one()
    assert row == "kept"


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


async def test_writers_queue_on_the_gate_in_arrival_order_and_readers_pass(sqlite_db: Database) -> None:
    """Concurrent write transactions of one file queue on the in-process gate (no busy-handler sleeps): each
    runs when the previous commits or rolls back, in the order they asked; a reader never waits for it."""
    async with sqlite_db.transaction() as s:
        user_id = (await users.get_or_create_user(s, name="alice")).id
    order: list[str] = []
    first_holds = asyncio.Event()
    release_first = asyncio.Event()

    async def first() -> None:
        async with sqlite_db.transaction() as s:
            await sessions.create_session(s, user_id=user_id, title="first")
            order.append("first wrote")
            first_holds.set()
            await release_first.wait()
        order.append("first committed")

    async def writer(name: str, *, fail: bool = False) -> None:
        try:
            async with sqlite_db.transaction() as s:
                await sessions.create_session(s, user_id=user_id, title=name)
                order.append(f"{name} wrote")
                if fail:
                    raise RuntimeError("rolled back")
        except RuntimeError:
            order.append(f"{name} rolled back")

    holder = asyncio.create_task(first())
    await first_holds.wait()
    waiting = [asyncio.create_task(writer("second", fail=True))]
    await asyncio.sleep(0.05)
    waiting.append(asyncio.create_task(writer("third")))
    await asyncio.sleep(0.05)
    async with sqlite_db.session() as s:  # a reader while the write lock is held: not queued
        assert (await users.get_user_by_name(s, name="alice")) is not None
    assert order == ["first wrote"]
    started = time.monotonic()
    release_first.set()
    await asyncio.gather(holder, *waiting)
    assert time.monotonic() - started < 0.5  # handed on at once, not after a busy-handler sleep
    # a task's line after its transaction ended may come after the next writer's: only the writes are ordered
    assert [o for o in order if o.endswith("wrote")] == ["first wrote", "second wrote", "third wrote"]
    assert "first committed" in order and "second rolled back" in order
    async with sqlite_db.session() as s:
        titles = sorted(c.title for c in (await sessions.list_sessions(s, user_id=user_id)).items)
    assert titles == ["first", "third"]


async def test_an_inline_transaction_makes_no_hop_unless_another_process_holds_the_lock(
    sqlite_db: Database,
) -> None:
    """`transaction(inline=True)`: with this process's gate held no one else can hold SQLite's write lock, so its
    reads, its first write, the statements after it and its commit (which never checkpoints) run in the
    caller's thread; the next transaction on the same pooled connection hops per statement as usual."""
    async with sqlite_db.transaction() as session:
        user_id = (await users.get_or_create_user(session, name="alice")).id
    async with sqlite_db.transaction(inline=True) as session:
        hops, restore = _count_hops(await _driver(session))
        await session.execute(select(User).where(col(User.id) == user_id))
        await session.execute(update(User).where(col(User.id) == user_id).values(display_name="A"))
        chat = await sessions.create_session(session, user_id=user_id, title="inline")
        await session.execute(update(User).where(col(User.id) == user_id).values(display_name="B"))
        assert (await session.execute(select(User.display_name).where(col(User.id) == user_id))).scalar() == "B"
        assert hops == []
    assert hops == []
    async with sqlite_db.session() as other:  # committed: another connection sees it
        assert (await sessions.get_session(other, user_id=user_id, session_id=chat.id)) is not None
        assert (await other.execute(select(User.display_name).where(col(User.id) == user_id))).scalar() == "B"
    hops.clear()
    async with sqlite_db.transaction() as session:  # not inline (same pooled connection): each statement hops
        assert await _driver(session) is not None
        await session.execute(update(User).where(col(User.id) == user_id).values(display_name="C"))
        await session.execute(update(User).where(col(User.id) == user_id).values(display_name="D"))
    restore()
    assert hops == ["_run_statement", "_run_statement", "commit"]


async def test_commits_never_checkpoint_and_the_wal_is_checkpointed_off_the_loop(
    sqlite_db: Database, tmp_path: Path
) -> None:
    """A commit runs in the event loop's thread, so SQLite's auto-checkpoint (copy the WAL into the database
    and sync it, inside the commit that passes 1000 pages) is off on our connections; the checkpointer copies
    what was committed on a thread of its own within about a second, and the WAL is reused instead of growing
    with everything written."""
    async with sqlite_db.session() as session:
        assert (await session.execute(text("PRAGMA wal_autocheckpoint"))).scalar() == 0
    async with sqlite_db.transaction() as session:
        await session.execute(text("CREATE TABLE blobs (b BLOB)"))
    database, wal, chunk, per_round = tmp_path / "fleet.db", tmp_path / "fleet.db-wal", 1 << 20, 4
    for done in range(1, 4):
        for _ in range(per_round):
            async with sqlite_db.transaction(inline=True) as session:
                await session.execute(text("INSERT INTO blobs VALUES (zeroblob(:n))"), {"n": chunk})
        async with asyncio.timeout(10):  # the checkpointer copied it all into the database file
            while database.stat().st_size < done * per_round * chunk:
                await asyncio.sleep(0.05)
            while not _checkpoint_finished(database):  # and finished (it syncs after the copy)
                await asyncio.sleep(0.05)
    assert wal.stat().st_size < 2 * per_round * chunk  # reused: not 3 rounds' worth


def _checkpoint_finished(database: Path) -> bool:
    """No checkpoint in progress and every WAL frame copied (a PASSIVE checkpoint of our own that finds nothing
    left to copy; it answers busy while the checkpointer's round holds the lock)."""
    with contextlib.closing(sqlite3.connect(database)) as conn:
        busy, log, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return bool(busy == 0 and log == copied)


async def test_an_inline_first_write_waits_in_aiosqlites_thread_while_another_process_holds_the_lock(
    sqlite_db: Database, tmp_path: Path
) -> None:
    """Another process's write lock (here a second connection outside the gate): the first write gets SQLite's
    busy answer at once instead of sleeping in the event loop's thread, hops, waits there for the lock and
    succeeds once it is released; the loop stays free meanwhile and the connection keeps its busy timeout."""
    async with sqlite_db.transaction() as session:
        user_id = (await users.get_or_create_user(session, name="alice")).id
    holder = sqlite3.connect(tmp_path / "fleet.db", isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("UPDATE users SET display_name = 'other process'")
    ticks = 0

    async def ticking() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.get_running_loop().create_task(ticking())
    asyncio.get_running_loop().call_later(0.3, holder.commit)
    try:
        async with sqlite_db.transaction(inline=True) as session:
            hops, restore = _count_hops(await _driver(session))
            await session.execute(update(User).where(col(User.id) == user_id).values(display_name="mine"))
            await session.execute(update(User).where(col(User.id) == user_id).values(display_name="mine again"))
            restore()
    finally:
        ticker.cancel()
        holder.close()
    assert hops == ["_run_statement"]  # the first write only; the next statement ran in this thread
    assert ticks >= 10  # the loop ran while the write waited for the other process
    async with sqlite_db.session() as session:
        assert (await session.execute(select(User.display_name).where(col(User.id) == user_id))).scalar() == (
            "mine again"
        )
        raw = await (await session.connection()).get_raw_connection()
        cursor = raw.driver_connection._conn.execute("PRAGMA busy_timeout")  # type: ignore[union-attr]
        assert cursor.fetchone()[0] == 30_000


async def test_an_inline_statements_error_rolls_back_and_hands_the_gate_on(sqlite_db: Database) -> None:
    async with sqlite_db.transaction() as session:
        user_id = (await users.get_or_create_user(session, name="alice")).id
    with pytest.raises(IntegrityError):
        async with sqlite_db.transaction(inline=True) as session:
            await sessions.create_session(session, user_id=user_id, title="lost")
            await users.get_or_create_user(session, name="bob")
            await session.execute(update(User).where(col(User.name) == "bob").values(name="alice"))  # not unique
    async with asyncio.timeout(5):  # the gate was handed on: the next writer does not wait
        async with sqlite_db.transaction(inline=True) as session:
            await sessions.create_session(session, user_id=user_id, title="kept")
    async with sqlite_db.session() as session:
        titles = [c.title for c in (await sessions.list_sessions(session, user_id=user_id)).items]
        assert await users.get_user_by_name(session, name="bob") is None
    assert titles == ["kept"]


async def test_inline_needs_wal(sqlite_db: Database) -> None:
    """Only a file in WAL mode runs statements inline: with a rollback journal (a file system without shared
    memory keeps one) a statement inside a transaction may wait for readers. An in-memory database has none."""
    memory = Database("sqlite+aiosqlite://")
    try:
        async with memory.session() as session:
            raw = await (await session.connection()).get_raw_connection()
            assert raw.dbapi_connection.wal is False  # type: ignore[union-attr]
    finally:
        await memory.dispose()
    async with sqlite_db.transaction() as session:
        user_id = (await users.get_or_create_user(session, name="alice")).id
    async with sqlite_db.session() as session, session.begin():
        raw = await (await session.connection()).get_raw_connection()
        assert raw.dbapi_connection.wal is True  # type: ignore[union-attr]
        raw.dbapi_connection.wal = False  # type: ignore[union-attr]  # as the connect hook leaves a journal file
        try:
            raw.dbapi_connection.run_inline()  # type: ignore[union-attr]
            hops, restore = _count_hops(await _driver(session))
            await session.execute(update(User).where(col(User.id) == user_id).values(display_name="B"))
            await session.execute(update(User).where(col(User.id) == user_id).values(display_name="C"))
            restore()
        finally:
            raw.dbapi_connection.wal = True  # type: ignore[union-attr]
    assert hops == ["_run_statement", "_run_statement"]


async def test_an_inline_transaction_ends_without_letting_other_tasks_in(sqlite_db: Database) -> None:
    """A burst of turn starts each ends its transaction and goes on (ack, prepare) before the next start runs;
    AsyncSession's own exit closed in a task of its own, which queued every start behind all the others."""
    async with sqlite_db.transaction() as session:
        user_id = (await users.get_or_create_user(session, name="alice")).id  # the pool holds a connection now
    order: list[str] = []

    async def start() -> None:
        async with sqlite_db.transaction(inline=True) as session:
            await sessions.create_session(session, user_id=user_id, title="first")
        order.append("first started")

    async def other() -> None:
        order.append("other ran")

    await asyncio.gather(start(), other())
    assert order == ["first started", "other ran"]
    assert sqlite_db.engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError):
        async with sqlite_db.transaction(inline=True) as session:
            await sessions.create_session(session, user_id=user_id, title="rolled back")
            raise RuntimeError("boom")
    assert sqlite_db.engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    async with sqlite_db.session() as session:
        assert [c.title for c in (await sessions.list_sessions(session, user_id=user_id)).items] == ["first"]
