"""Migrations: upgrade, downgrade and re-upgrade, no drift between models and migrated schema, the startup
policies (SQLite self-migrates, Postgres refuses to start behind head) and their exact messages."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Connection

from fleet_rlm.store import (
    Database,
    SchemaBehindError,
    SchemaUnknownError,
    create_engine,
    migrate,
    open_database,
)
from fleet_rlm.store.models import metadata
from fleet_rlm.store.repos import events, runs, sessions, users
from tests.store.throwaway import run_on

EXPECTED_TABLES = {
    "users",
    "workspaces",
    "sessions",
    "turns",
    "runs",
    "run_events",
    "attachments",
    "artifacts",
    "llm_profiles",
    "role_bindings",
    "ws_tickets",
    "trace_feedback",
    "datasets",
    "optimization_runs",
    "program_versions",
}


async def _tables(url: str) -> set[str]:
    return set(await run_on(url, lambda c: sa.inspect(c).get_table_names()))


async def _drift(url: str) -> list[object]:
    def diff(conn: Connection) -> list[object]:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        return list(compare_metadata(context, metadata))

    return await run_on(url, diff)


def test_migrations_dir_is_found_without_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert (migrate.migrations_dir() / "env.py").is_file()
    assert migrate.head() == "0017"


async def test_upgrade_downgrade_upgrade(db_url: str, is_sqlite: bool) -> None:
    if is_sqlite:
        Path(db_url.split("///", 1)[1]).parent.mkdir(parents=True)
    assert await migrate.current_async(db_url) is None

    await migrate.upgrade_async(db_url)
    assert await migrate.current_async(db_url) == migrate.head()
    assert await _tables(db_url) >= EXPECTED_TABLES

    await migrate.downgrade_async(db_url, "base")
    assert await migrate.current_async(db_url) is None
    assert (await _tables(db_url)) & EXPECTED_TABLES == set()

    await migrate.upgrade_async(db_url, "head")
    assert await migrate.current_async(db_url) == migrate.head()
    assert await _tables(db_url) >= EXPECTED_TABLES


async def test_models_match_migrated_schema(db: Database) -> None:
    assert await _drift(db.url) == []
    await migrate.downgrade_async(db.url, "base")  # the comparison does see a missing schema
    assert {diff[0] for diff in await _drift(db.url) if isinstance(diff, tuple)} >= {"add_table"}


async def test_check_reports_reachable_and_at_head(db: Database) -> None:
    report = await db.check()
    assert report["reachable"] is True
    assert report["current"] == report["head"] == migrate.head()
    assert report["at_head"] is True
    assert report["error"] is None


async def test_check_reports_behind_and_unreachable(db: Database, tmp_path: Path) -> None:
    await migrate.downgrade_async(db.url, "base")
    report = await db.check()
    assert report["reachable"] is True and report["current"] is None and report["at_head"] is False

    missing = Database(f"sqlite+aiosqlite:///{tmp_path / 'no-such-dir' / 'x.db'}")
    try:
        report = await missing.check()
    finally:
        await missing.dispose()
    assert report["reachable"] is False and report["at_head"] is False and report["error"]


async def test_assert_at_head_on_empty_and_behind_database(db_url: str, is_sqlite: bool) -> None:
    if is_sqlite:
        Path(db_url.split("///", 1)[1]).parent.mkdir(parents=True)
    head = migrate.head()
    with pytest.raises(SchemaBehindError) as empty:
        await migrate.assert_at_head_async(db_url)
    assert str(empty.value) == f"database schema is at empty, code needs {head}: run `fleet-rlm db upgrade`"
    assert empty.value.code == "schema_behind"

    await migrate.upgrade_async(db_url)
    assert await migrate.assert_at_head_async(db_url) == head

    await _stamp(db_url, "0000_older")
    with pytest.raises(SchemaUnknownError) as unknown:
        await migrate.assert_at_head_async(db_url)
    assert unknown.value.code == "schema_unknown"
    assert "0000_older" in str(unknown.value)


async def _stamp(url: str, revision: str) -> None:
    engine = create_engine(url, pooled=False)
    try:
        async with engine.begin() as conn:
            await conn.execute(sa.text("UPDATE alembic_version SET version_num = :r"), {"r": revision})
    finally:
        await engine.dispose()


def test_sync_helpers_from_sync_code(db_url: str, is_sqlite: bool) -> None:
    """The CLI path: plain sync calls, no event loop running."""
    if is_sqlite:
        Path(db_url.split("///", 1)[1]).parent.mkdir(parents=True)
    with pytest.raises(SchemaBehindError, match=rf"^database schema is at empty, code needs {migrate.head()}: run "):
        migrate.assert_at_head(db_url)
    migrate.upgrade(db_url)
    assert migrate.current(db_url) == migrate.head()
    assert migrate.assert_at_head(db_url) == migrate.head()
    migrate.downgrade(db_url, "base")
    assert migrate.current(db_url) is None


def test_ensure_sqlite_schema_creates_dir_and_migrates(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'nested' / 'data' / 'fleet.db'}"
    assert migrate.ensure_sqlite_schema(url) == migrate.head()
    assert (tmp_path / "nested" / "data" / "fleet.db").is_file()
    assert migrate.ensure_sqlite_schema(url) == migrate.head()  # idempotent
    assert migrate.current(url) == migrate.head()


def test_ensure_sqlite_schema_refuses_postgres() -> None:
    with pytest.raises(ValueError, match="fleet-rlm db upgrade"):
        migrate.ensure_sqlite_schema("postgresql+asyncpg://nobody@127.0.0.1:1/none")


async def test_open_database_follows_the_backend_policy(db_url: str, is_sqlite: bool) -> None:
    if is_sqlite:
        database = await open_database(db_url)  # migrates itself, creating the directory
        try:
            assert (await database.check())["at_head"] is True
        finally:
            await database.dispose()
    else:
        with pytest.raises(SchemaBehindError):
            await open_database(db_url)
        await migrate.upgrade_async(db_url)
        database = await open_database(db_url)
        await database.dispose()


async def test_concurrent_first_starts_migrate_once(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'race' / 'fleet.db'}"
    results = await asyncio.gather(*(migrate.ensure_sqlite_schema_async(url) for _ in range(4)))
    assert results == [migrate.head()] * 4
    assert await migrate.current_async(url) == migrate.head()


async def test_a_failing_sqlite_migration_leaves_no_partial_schema(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'fleet.db'}"
    engine = create_engine(url, pooled=False)
    try:
        async with engine.begin() as conn:  # a table the migration will collide with halfway through
            await conn.execute(sa.text("CREATE TABLE sessions (id TEXT PRIMARY KEY)"))
    finally:
        await engine.dispose()
    with pytest.raises(sa.exc.OperationalError, match="already exists"):
        await migrate.upgrade_async(url)
    assert await migrate.current_async(url) is None
    assert await _tables(url) == {"sessions"}  # users, workspaces... created before the failure were rolled back


async def test_run_outcome_backfill_marks_budget_stopped_runs_partial(db: Database) -> None:
    """0006 gives succeeded runs an outcome: partial (with the root's last budget) when a budget stopped them."""
    async with db.transaction() as s:
        user = await users.get_or_create_user(s, name="alice")
        chat = await sessions.create_session(s, user_id=user.id)
        ids = {}
        for name in ("whole", "cut", "child_cut", "failed"):
            run, _ = await runs.create_run(s, user_id=user.id, session_id=chat.id)
            await runs.set_run_status(s, run_id=run.id, status="running")
            ids[name] = run.id
        await events.append_event(s, run_id=ids["cut"], type="budget_exhausted", payload={"budget": "max_iters"})
        await events.append_event(s, run_id=ids["cut"], type="budget_exhausted", payload={"budget": "max_llm_calls"})
        await events.append_event(
            s, run_id=ids["child_cut"], type="budget_exhausted", payload={"budget": "max_iters"}, depth=1
        )
        for name in ("whole", "cut", "child_cut"):
            await runs.set_run_status(s, run_id=ids[name], status="succeeded")
        await runs.set_run_status(s, run_id=ids["failed"], status="failed")
    await db.dispose()
    await migrate.downgrade_async(db.url, "0005")
    await migrate.upgrade_async(db.url, "head")
    async with db.session() as s:
        found = {name: await runs.get_run(s, run_id=run_id) for name, run_id in ids.items()}
    outcomes = {name: (run.outcome, run.stop_reason) for name, run in found.items() if run is not None}
    assert outcomes == {
        "whole": ("complete", None),
        "cut": ("partial", "max_llm_calls"),
        "child_cut": ("complete", None),  # a child running out does not make the turn partial
        "failed": (None, None),
    }
