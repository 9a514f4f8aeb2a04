"""What must hold before the server accepts requests: a writable data dir and a database at the schema head.

SQLite (the embedded default) migrates itself on first start. Postgres never migrates at startup: a schema behind
head fails fast with one line naming the command to run. The CLI calls `prepare` before binding a port so these
failures print as one line instead of a traceback.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.store import Database, SchemaBehindError, SchemaUnknownError, open_database


def prepare_data_dir(settings: Settings) -> Path:
    """Create data_dir, workspaces/ and logs/; prove the directory is writable."""
    root = settings.data_dir
    try:
        for path in (root, settings.workspaces_dir, settings.logs_dir):
            path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root, prefix=".write-check-"):
            pass
    except OSError as exc:
        raise FleetError(
            f"data dir {root} is not writable ({exc.strerror or exc})",
            code="data_dir_unwritable",
            action="set FLEET_DATA_DIR to a writable directory",
        ) from exc
    os.chmod(root, 0o700)
    return root


def migration_attributes(settings: Settings) -> dict[str, Any]:
    """What migrations get from the server: a loader of its Fernet key (read only by a migration that encrypts
    stored values, such as 0012's profile headers; imported then: the llm package loads DSPy)."""

    def secret_key() -> bytes:
        from fleet_rlm.llm.secrets import load_or_create_key

        return load_or_create_key(settings)

    return {"secret_key": secret_key}


async def prepare_database(settings: Settings) -> Database:
    """Bring the schema to head (SQLite) or refuse to start (Postgres behind head, or queue execution without the
    queue's schema); return a live Database."""
    check_execution(settings)
    url = settings.resolved_database_url
    try:
        database = await open_database(url, migration_attributes=migration_attributes(settings))
        if settings.execution == "queue":
            await require_queue_schema(database)
        return database
    except SchemaBehindError as exc:
        raise FleetError(str(exc), code="schema_behind") from exc
    except SchemaUnknownError as exc:
        raise FleetError(str(exc), code="schema_unknown", action="upgrade fleet-rlm to a matching version") from exc
    except (OSError, ConnectionError) as exc:
        raise database_unreachable(settings, exc) from exc
    except Exception as exc:  # driver-specific errors (asyncpg, sqlite3) share no base class
        if _looks_like_connection_error(exc):
            raise database_unreachable(settings, exc) from exc
        raise


def check_execution(settings: Settings, *, worker: bool = False) -> None:
    """Queue execution needs Postgres (its job queue lives there); SQLite is one process that runs turns inline."""
    if settings.execution == "queue" and settings.database_kind != "postgresql":
        what = "fleet-rlm worker" if worker else "execution 'queue'"
        raise FleetError(
            f"{what} needs PostgreSQL: on SQLite turns run inline, in the server",
            code="queue_needs_postgres",
        )


async def require_queue_schema(database: Database) -> None:
    from fleet_rlm.services.queue.schema import has_queue_schema

    async with database.session() as session:
        present = await has_queue_schema(session)
    if not present:
        await database.dispose()
        raise FleetError(
            "the job queue's tables are missing from the database",
            code="schema_behind",
        )


def database_unreachable(settings: Settings, exc: BaseException) -> FleetError:
    return FleetError(
        f"cannot reach the {settings.database_kind} database: {_first_line(exc)}",
        code="database_unreachable",
        action="check FLEET_DATABASE_URL and that the server is running",
    )


def _looks_like_connection_error(exc: BaseException) -> bool:
    text = f"{type(exc).__name__} {exc}".lower()
    needles = (
        "connect",
        "refused",
        "timeout",
        "could not translate",
        "does not exist",
        "password",
        "unable to open",
    )
    return any(needle in text for needle in needles)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]
