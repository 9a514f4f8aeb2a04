"""Alembic environment for fleet-rlm (async engines; batch mode on SQLite).

Two entry points: `fleet_rlm.store.migrate` passes an open connection in `config.attributes["connection"]`
(the app and CLI path); a developer running `alembic ...` from the repo root gets an engine built from
`sqlalchemy.url` or, when that is empty, from the fleet-rlm settings (FLEET_DATABASE_URL / data_dir).
"""

from __future__ import annotations

import asyncio
from logging.config import fileConfig
from typing import Any

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy.engine import Connection

from fleet_rlm.store.models import metadata
from fleet_rlm.store.types import UTCDateTime

config = context.config
if config.config_file_name is not None and config.attributes.get("connection") is None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | bool:
    """Render our TypeDecorators as plain SQLAlchemy types so migrations never import app code."""
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        render_item=render_item,
    )


def _run_with(connection: Connection) -> None:
    _configure(connection)
    with context.begin_transaction():
        context.run_migrations()


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from fleet_rlm.config import load_settings

    return load_settings().resolved_database_url


async def _run_async() -> None:
    from fleet_rlm.store.engine import create_engine

    engine = create_engine(_url(), pooled=False)
    try:
        async with engine.connect() as connection:
            if connection.dialect.name == "sqlite":
                await connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            await connection.run_sync(_run_with)
            await connection.commit()
    finally:
        await engine.dispose()


def run_migrations_offline() -> None:
    url = _url()
    context.configure(
        url=url,
        target_metadata=metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=url.startswith("sqlite"),
        compare_type=True,
        render_item=render_item,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run_with(connection)
    else:
        asyncio.run(_run_async())


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
