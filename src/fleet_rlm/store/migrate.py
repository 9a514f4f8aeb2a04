"""Alembic, driven from code: upgrade/downgrade/current/head plus the startup policies.

Policies: the SQLite default migrates itself on start (`ensure_sqlite_schema`); Postgres never does, startup
calls `assert_at_head` and the operator runs `fleet-rlm db upgrade`. The Alembic Config is built here
(script_location + url), so nothing depends on the working directory or alembic.ini. Alembic's command API is
sync: the async variants hand it a connection through `Connection.run_sync`; the sync wrappers run those on a
fresh event loop (in a worker thread when the caller already runs one), so the CLI and the app share one path.
`attributes` reach the migrations as `config.attributes` (e.g. "secret_key": a loader of the server's Fernet
key, for a migration that encrypts data), so a data migration needs no settings of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy.engine import Connection

from fleet_rlm.store.engine import create_engine
from fleet_rlm.store.errors import SchemaBehindError, SchemaUnknownError
from fleet_rlm.store.urls import backend_of, normalize_url, sqlite_path

T = TypeVar("T")

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # .../fleet_rlm


def migrations_dir() -> Path:
    """`fleet_rlm/_migrations` in an installed wheel, else `<repo>/migrations` in a source checkout."""
    for candidate in (_PACKAGE_DIR / "_migrations", _PACKAGE_DIR.parents[1] / "migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise FileNotFoundError(f"migrations not found next to {_PACKAGE_DIR}: reinstall fleet-rlm")


def alembic_config(url: str | None = None) -> Config:
    """A Config pointing at our migrations; `url` (if given) becomes `sqlalchemy.url`."""
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    if url is not None:
        cfg.set_main_option("sqlalchemy.url", normalize_url(url).replace("%", "%%"))
    return cfg


def head() -> str:
    """The single head revision of the code's migrations."""
    rev = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if rev is None:
        raise RuntimeError("no migration revisions found")
    return rev


def is_known_revision(revision: str) -> bool:
    try:
        return ScriptDirectory.from_config(alembic_config()).get_revision(revision) is not None
    except CommandError:
        return False


async def _on_connection(url: str, fn: Callable[[Connection], T], *, write: bool = False) -> T:
    """Run `fn(sync_connection)` in one committed transaction on a throwaway NullPool engine.

    SQLite: foreign keys are off for this connection (batch mode recreates tables, which would otherwise
    cascade deletes) and, for writes, the transaction starts with BEGIN IMMEDIATE. That makes a migration
    atomic (the driver would otherwise autocommit each DDL statement) and serializes processes that start
    on the same fresh file. The engine is disposed afterwards, so no such connection is reused.
    """
    engine = create_engine(url, pooled=False)
    try:
        async with engine.connect() as conn:
            if backend_of(url) == "sqlite":
                await conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
                if write:
                    await conn.exec_driver_sql("BEGIN IMMEDIATE")
            result = await conn.run_sync(fn)
            await conn.commit()
            return result
    finally:
        await engine.dispose()


Attributes = Mapping[str, Any] | None


def _with_config(
    url: str, action: Callable[[Config], None], attributes: Attributes = None
) -> Callable[[Connection], None]:
    def run(connection: Connection) -> None:
        cfg = alembic_config(url)
        cfg.attributes.update(attributes or {})
        cfg.attributes["connection"] = connection
        action(cfg)

    return run


def _revision_of(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


def _check_known(rev: str | None, code_head: str) -> None:
    if rev is not None and rev != code_head and not is_known_revision(rev):
        raise SchemaUnknownError(rev, code_head)


async def upgrade_async(url: str, revision: str = "head", *, attributes: Attributes = None) -> None:
    await _on_connection(url, _with_config(url, lambda cfg: command.upgrade(cfg, revision), attributes), write=True)


async def downgrade_async(url: str, revision: str, *, attributes: Attributes = None) -> None:
    action = _with_config(url, lambda cfg: command.downgrade(cfg, revision), attributes)
    await _on_connection(url, action, write=True)


async def current_async(url: str) -> str | None:
    """The revision stamped in the database, None when it was never migrated."""
    return await _on_connection(url, _revision_of)


async def assert_at_head_async(url: str) -> str:
    """Return the head revision, or raise SchemaBehindError / SchemaUnknownError."""
    code_head = head()
    rev = await current_async(url)
    if rev == code_head:
        return code_head
    _check_known(rev, code_head)
    raise SchemaBehindError(rev, code_head)


def _create_at_head(connection: Connection, url: str) -> None:
    """An empty database gets the models' schema and the head stamp instead of every migration replayed (a
    third of a fresh local server's database start). `tests/store/test_schema_parity.py` proves both schemas are
    the same, on SQLite and Postgres, so a migration without its model change (or the reverse) fails there."""
    from fleet_rlm.store.models import metadata

    metadata.create_all(connection)
    MigrationContext.configure(connection).stamp(ScriptDirectory.from_config(alembic_config(url)), "head")


def _is_empty(connection: Connection) -> bool:
    return not sa.inspect(connection).get_table_names()


async def ensure_sqlite_schema_async(url: str, *, attributes: Attributes = None) -> str:
    """Create the SQLite file's directory and bring it to head; returns the head revision.

    A database without tables is created from the models at head (`_create_at_head`); any other is migrated as
    far as it is behind. The check and the change share one locked transaction, so concurrent first starts
    create or migrate once.
    """
    if backend_of(url) != "sqlite":
        raise ValueError("ensure_sqlite_schema only migrates SQLite; Postgres needs `fleet-rlm db upgrade`")
    path = sqlite_path(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    code_head = head()
    if await current_async(url) == code_head:  # the common case: no write lock needed
        return code_head

    def ensure(connection: Connection) -> None:
        rev = _revision_of(connection)
        _check_known(rev, code_head)
        if rev is None and _is_empty(connection):
            _create_at_head(connection, url)
        elif rev != code_head:
            _with_config(url, lambda cfg: command.upgrade(cfg, "head"), attributes)(connection)

    await _on_connection(url, ensure, write=True)
    return code_head


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, even if this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def upgrade(url: str, revision: str = "head", *, attributes: Attributes = None) -> None:
    _run(upgrade_async(url, revision, attributes=attributes))


def downgrade(url: str, revision: str, *, attributes: Attributes = None) -> None:
    _run(downgrade_async(url, revision, attributes=attributes))


def current(url: str) -> str | None:
    return _run(current_async(url))


def assert_at_head(url: str) -> str:
    return _run(assert_at_head_async(url))


def ensure_sqlite_schema(url: str, *, attributes: Attributes = None) -> str:
    return _run(ensure_sqlite_schema_async(url, attributes=attributes))
