"""Store tests run on SQLite (tmp_path) and, when FLEET_TEST_POSTGRES_URL is set, on a fresh Postgres database
per test (created with a unique name, dropped afterwards, even if the test fails)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
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
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database URL (not migrated) on each backend."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'db' / 'fleet.db'}"
        return
    admin_url = os.environ.get(POSTGRES_ENV)
    if not admin_url:
        pytest.skip(SKIP_REASON)
    name = f"fleet_store_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(admin_url, f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(_admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def is_sqlite(db_url: str) -> bool:
    return db_url.startswith("sqlite")


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[Database]:
    """A Database migrated to head."""
    if db_url.startswith("sqlite"):
        await migrate.ensure_sqlite_schema_async(db_url)
    else:
        await migrate.upgrade_async(db_url)
    database = Database(db_url)
    try:
        yield database
    finally:
        await database.dispose()
