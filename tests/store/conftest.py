"""Store tests run on SQLite (tmp_path) and, when FLEET_TEST_POSTGRES_URL is set, on a fresh Postgres database
per test (created with a unique name, dropped afterwards, even if the test fails)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from fleet_rlm.store import Database, migrate

POSTGRES_ENV = "FLEET_TEST_POSTGRES_URL"
SKIP_REASON = (
    f"{POSTGRES_ENV} is not set; set it to a postgresql+asyncpg:// URL of a server where the test user may "
    "create databases to run the Postgres variant"
)


async def _admin(admin_url: str, sql: str) -> None:
    import asyncpg

    dsn = make_url(admin_url).set(drivername="postgresql").render_as_string(hide_password=False)
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres" and not os.environ.get(POSTGRES_ENV):
        pytest.skip(SKIP_REASON)
    return str(request.param)


@pytest.fixture
def is_sqlite(backend: str) -> bool:
    return backend == "sqlite"


@contextmanager
def _postgres_database(template: str | None = None) -> Iterator[str]:
    """Create a uniquely named database (optionally cloned from `template`); drop it on exit."""
    admin_url = os.environ[POSTGRES_ENV]
    name = f"fleet_store_{uuid.uuid4().hex[:12]}"
    clone = f' TEMPLATE "{template}"' if template else ""
    asyncio.run(_admin(admin_url, f'CREATE DATABASE "{name}"{clone}'))
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(_admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def postgres_template() -> Iterator[str]:
    """A database migrated to head once per test session; per-test databases are cheap clones of it."""
    with _postgres_database() as url:
        migrate.upgrade(url)
        yield str(make_url(url).database)


@pytest.fixture
def db_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """An empty (never migrated) database on each backend."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'db' / 'fleet.db'}"
        return
    with _postgres_database() as url:
        yield url


@pytest.fixture
def migrated_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh database already at head (SQLite: migrated in tmp_path; Postgres: cloned from the template)."""
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'db' / 'fleet.db'}"
        migrate.ensure_sqlite_schema(url)
        yield url
        return
    with _postgres_database(template=request.getfixturevalue("postgres_template")) as url:
        yield url


@pytest.fixture
async def db(migrated_url: str) -> AsyncIterator[Database]:
    """A Database at head; disposed after the test."""
    database = Database(migrated_url)
    try:
        yield database
    finally:
        await database.dispose()


@pytest.fixture
async def run_id(db: Database) -> str:
    """A queued run in a fresh session of a fresh user."""
    from fleet_rlm.store.repos import runs, sessions, users

    async with db.transaction() as s:
        user = await users.get_or_create_user(s, name="alice")
        chat = await sessions.create_session(s, user_id=user.id, title="events")
        run, _ = await runs.create_run(s, user_id=user.id, session_id=chat.id)
    return run.id
