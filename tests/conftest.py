"""Test isolation for the whole suite: a clean environment, a data dir and a database per test.

The suite runs on SQLite by default. With `FLEET_DATABASE_URL=postgresql+asyncpg://...` every test that asks for
`database_url` gets a fresh database on that server instead (CI runs the suite both ways). Tests never see the
developer's FLEET_*/DSPY_*/DAYTONA_*/OTEL_* variables or `.env`.

Tests marked `db_independent` (the directories below, or a module's `pytestmark`) run the same whatever
FLEET_DATABASE_URL says: neither they nor a server they start use the suite's database. The Postgres run skips
them (the SQLite run covers them); one that asks for a database fixture is a collection error.
"""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

# A suite started in the background of a shell without job control (`cmd &`) inherits Ctrl-C as ignored, and so
# would every CLI it spawns: the Ctrl-C tests would then test nothing. Give the suite and its children the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

_SUITE_DB_URL = os.environ.get("FLEET_DATABASE_URL", "")
if _SUITE_DB_URL.startswith("postgresql"):
    os.environ.setdefault("FLEET_TEST_POSTGRES_URL", _SUITE_DB_URL)
    os.environ["FLEET_TEST_DATABASE_KIND"] = "postgresql"
for _name in list(os.environ):
    if _name.startswith(("FLEET_", "DSPY_", "DAYTONA_", "OTEL_")) and not _name.startswith("FLEET_TEST_"):
        del os.environ[_name]

POSTGRES_ADMIN_URL = os.environ.get("FLEET_TEST_POSTGRES_URL")
SUITE_ON_POSTGRES = os.environ.get("FLEET_TEST_DATABASE_KIND") == "postgresql"

TESTS_DIR = Path(__file__).parent
DB_INDEPENDENT_DIRS = {"bench", "bench_perf", "docs", "events", "llm", "runtime", "sandbox", "testing"}
SUITE_DATABASE_FIXTURES = {"database_url", "module_data", "postgres_template"}
DB_INDEPENDENT_SKIP = "db_independent: uses no configured database, so the SQLite run covers it"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark and check db_independent tests; put modules with `slow` tests first, so that with `--dist loadfile
    --no-loadscope-reorder` (make test) no long module starts last while the other worker sits idle."""
    slow_modules = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_modules)
    for item in items:
        if item.path.relative_to(TESTS_DIR).parts[0] in DB_INDEPENDENT_DIRS:
            item.add_marker(pytest.mark.db_independent)
        used = SUITE_DATABASE_FIXTURES & set(getattr(item, "fixturenames", ()))
        if used and item.get_closest_marker("db_independent"):
            raise pytest.UsageError(f"{item.nodeid} is marked db_independent but uses {sorted(used)}")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skipped here (not by a mark) so the Postgres run's summary has one line for all of them."""
    if SUITE_ON_POSTGRES and item.get_closest_marker("db_independent"):
        pytest.skip(DB_INDEPENDENT_SKIP)


def _asyncpg_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


async def _admin(sql: str) -> None:
    import asyncpg

    assert POSTGRES_ADMIN_URL is not None
    connection = await asyncpg.connect(_asyncpg_dsn(POSTGRES_ADMIN_URL))
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


def make_postgres_database() -> str:
    """Create an empty database on the test server and return its URL."""
    assert POSTGRES_ADMIN_URL is not None
    name = f"fleet_test_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    base, _, _ = POSTGRES_ADMIN_URL.rpartition("/")
    return f"{base}/{name}"


def drop_postgres_database(url: str) -> None:
    name = url.rpartition("/")[2]
    asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def postgres_template() -> Iterator[str | None]:
    """A database migrated to head once per test process; each test's database is a cheap copy of it."""
    if not SUITE_ON_POSTGRES:
        yield None
        return
    from fleet_rlm.store import migrate

    url = make_postgres_database()
    migrate.upgrade(url, "head")
    try:
        yield url.rpartition("/")[2]
    finally:
        drop_postgres_database(url)


@pytest.fixture
def database_url(data_dir: Path, postgres_template: str | None) -> Iterator[str]:
    """A database the app can start on: SQLite in the test's data dir (the app migrates it), or on Postgres a
    fresh copy of the migrated template (Postgres is never migrated at startup)."""
    if postgres_template is None:
        yield f"sqlite+aiosqlite:///{data_dir / 'fleet.db'}"
        return
    assert POSTGRES_ADMIN_URL is not None
    name = f"fleet_test_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}" TEMPLATE "{postgres_template}"'))
    url = f"{POSTGRES_ADMIN_URL.rpartition('/')[0]}/{name}"
    try:
        yield url
    finally:
        drop_postgres_database(url)


@pytest.fixture
def settings(data_dir: Path, database_url: str):  # type: ignore[no-untyped-def]
    from fleet_rlm.config import Settings

    return Settings(_env_file=None, data_dir=data_dir, database_url=database_url)  # type: ignore[call-arg]
