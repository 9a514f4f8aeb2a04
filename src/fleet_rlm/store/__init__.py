"""Persistence: SQLModel tables, async engine/sessions, Alembic migrations and repository functions.

Typical use (the API lifespan): `db = await open_database(settings.resolved_database_url)`, then
`async with db.transaction() as s: await repos.events.append_event(s, run_id=..., type=..., payload=...)`,
and `await db.dispose()` on shutdown. The CLI uses the sync helpers in `fleet_rlm.store.migrate`.
"""

from fleet_rlm.store.database import Database, open_database
from fleet_rlm.store.engine import create_engine, session_factory
from fleet_rlm.store.errors import (
    IdempotencyConflictError,
    InvalidTransitionError,
    NotFoundError,
    SchemaBehindError,
    SchemaUnknownError,
    StoreError,
)
from fleet_rlm.store.types import new_id, utcnow

__all__ = [
    "Database",
    "IdempotencyConflictError",
    "InvalidTransitionError",
    "NotFoundError",
    "SchemaBehindError",
    "SchemaUnknownError",
    "StoreError",
    "create_engine",
    "new_id",
    "open_database",
    "session_factory",
    "utcnow",
]
