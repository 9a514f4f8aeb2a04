"""The models' schema is the migrations' schema, on SQLite and Postgres: what lets a fresh SQLite database be
created from the models and stamped at head instead of replaying every migration (`migrate._create_at_head`).

Both databases are read back from the server itself (reflection plus the catalog's own DDL): tables, columns
(type, nullability, server default), primary keys, foreign keys with their actions, indexes (unique, partial),
unique and check constraints, triggers, views and sequences. A migration without its model change, or a model
change without its migration, makes the two differ. Column order is the one thing not compared: nothing reads
columns by position.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from fleet_rlm.store import migrate
from fleet_rlm.store.models import metadata
from tests.store.throwaway import run_on

POSTGRES = os.environ.get("FLEET_TEST_POSTGRES_URL")
VERSION_TABLE = "alembic_version"


def _catalog_sqlite(conn: Connection) -> dict[str, Any]:
    rows = conn.exec_driver_sql(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('index', 'trigger', 'view') "
        "AND name NOT LIKE 'sqlite_autoindex%'"
    )
    return {"objects": sorted(tuple(str(v) for v in row) for row in rows)}


def _catalog_postgres(conn: Connection) -> dict[str, Any]:
    def rows(sql: str) -> list[tuple[str, ...]]:
        return sorted(tuple(str(v) for v in row) for row in conn.exec_driver_sql(sql))

    return {
        "indexes": rows(
            f"SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '{VERSION_TABLE}'"
        ),
        "constraints": rows(
            "SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid) FROM pg_constraint c "
            f"WHERE c.connamespace = 'public'::regnamespace AND c.conrelid::regclass::text <> '{VERSION_TABLE}'"
        ),
        "triggers": rows(
            "SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal"
        ),
        "views": rows("SELECT viewname, definition FROM pg_views WHERE schemaname = 'public'"),
        "sequences": rows("SELECT sequence_name, data_type FROM information_schema.sequences"),
    }


def _table(inspector: Any, name: str) -> dict[str, Any]:
    def keyed(items: list[dict[str, Any]]) -> list[str]:
        return sorted(repr(sorted(item.items())) for item in items)

    columns = {
        column["name"]: (repr(column["type"]), column["nullable"], " ".join(str(column.get("default")).split()))
        for column in inspector.get_columns(name)
    }
    return {
        "columns": columns,
        "primary_key": inspector.get_pk_constraint(name),
        "foreign_keys": keyed(inspector.get_foreign_keys(name)),
        "indexes": keyed(inspector.get_indexes(name)),
        "unique": keyed(inspector.get_unique_constraints(name)),
        "checks": keyed(inspector.get_check_constraints(name)),
    }


def _snapshot(conn: Connection) -> dict[str, Any]:
    inspector = sa.inspect(conn)
    tables = sorted(set(inspector.get_table_names()) - {VERSION_TABLE})
    catalog = _catalog_sqlite(conn) if conn.dialect.name == "sqlite" else _catalog_postgres(conn)
    rows = {name: conn.execute(sa.select(sa.func.count()).select_from(sa.table(name))).scalar_one() for name in tables}
    return {"tables": {name: _table(inspector, name) for name in tables}, "catalog": catalog, "rows": rows}


async def _read(url: str) -> dict[str, Any]:
    return await run_on(url, _snapshot)


async def _create_from_models(url: str) -> None:
    await run_on(url, metadata.create_all, begin=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def two_empty_databases(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'migrated.db'}", f"sqlite+aiosqlite:///{tmp_path / 'created.db'}"
        return
    if not POSTGRES:
        pytest.skip("set FLEET_TEST_POSTGRES_URL to compare on Postgres")
    from tests.conftest import drop_postgres_database, make_postgres_database

    urls = (make_postgres_database(), make_postgres_database())
    try:
        yield urls
    finally:
        for url in urls:
            drop_postgres_database(url)


def _differences(migrated: dict[str, Any], created: dict[str, Any]) -> list[str]:
    found = []
    for name in sorted(set(migrated["tables"]) | set(created["tables"])):
        left, right = migrated["tables"].get(name), created["tables"].get(name)
        if left is None or right is None:
            found.append(f"table {name}: only {'created' if left is None else 'migrated'}")
            continue
        found += [
            f"{name}.{key}: migrated {left[key]} != created {right[key]}" for key in left if left[key] != right[key]
        ]
    if migrated["catalog"] != created["catalog"]:
        for key in migrated["catalog"]:
            only_m = sorted(set(migrated["catalog"][key]) - set(created["catalog"][key]))
            only_c = sorted(set(created["catalog"][key]) - set(migrated["catalog"][key]))
            if only_m or only_c:
                found.append(f"catalog {key}: only migrated {only_m}; only created {only_c}")
    return found


def test_models_create_exactly_the_migrated_schema(two_empty_databases: tuple[str, str]) -> None:
    migrated_url, created_url = two_empty_databases
    asyncio.run(migrate.upgrade_async(migrated_url, "head"))
    asyncio.run(_create_from_models(created_url))
    migrated, created = asyncio.run(_read(migrated_url)), asyncio.run(_read(created_url))
    assert len(migrated["tables"]) >= 15  # the comparison saw the real schema, not two empty ones
    assert sum(len(t["indexes"]) for t in migrated["tables"].values()) > 10
    assert _differences(migrated, created) == []
    assert set(migrated["rows"].values()) == {0}  # no migration seeds rows a created database would lack


def test_a_fresh_sqlite_database_is_created_at_head_and_migrates_like_a_migrated_one(tmp_path: Path) -> None:
    fresh, reference = f"sqlite+aiosqlite:///{tmp_path / 'fresh.db'}", f"sqlite+aiosqlite:///{tmp_path / 'ref.db'}"
    head = migrate.head()
    assert asyncio.run(migrate.ensure_sqlite_schema_async(fresh)) == head
    asyncio.run(migrate.upgrade_async(reference, "head"))
    assert asyncio.run(migrate.current_async(fresh)) == head
    assert _differences(asyncio.run(_read(reference)), asyncio.run(_read(fresh))) == []
    # the stamp is true: the created schema steps down and back up through the real migrations
    asyncio.run(migrate.downgrade_async(fresh, "-1"))
    assert asyncio.run(migrate.current_async(fresh)) != head
    assert asyncio.run(migrate.ensure_sqlite_schema_async(fresh)) == head
    assert _differences(asyncio.run(_read(reference)), asyncio.run(_read(fresh))) == []


def test_an_existing_sqlite_database_behind_head_is_migrated_not_recreated(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    asyncio.run(migrate.upgrade_async(url, "0001"))
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO users (id, name, created_at, updated_at) VALUES ('u1', 'kept', '2026-01-01', '2026-01-01')"
        )
    assert asyncio.run(migrate.ensure_sqlite_schema_async(url)) == migrate.head()
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT name, settings FROM users").all() == [("kept", "{}")]
    engine.dispose()
