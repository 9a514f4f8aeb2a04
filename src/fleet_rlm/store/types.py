"""Column types and value factories shared by every table.

Timestamps are always timezone-aware UTC in Python: SQLite keeps no offset, so the type re-attaches UTC on
read and refuses naive datetimes on write (a naive value is ambiguous and would silently shift on Postgres).
Ids are uuid4 hex strings so they can be generated before insert and are safe to show in URLs.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

ID_LENGTH = 32
ID = sa.String(ID_LENGTH)


def new_id() -> str:
    """A fresh 32-character uuid4 hex id."""
    return uuid.uuid4().hex


def utcnow() -> datetime:
    """Now, timezone-aware in UTC (the only kind of datetime the store accepts)."""
    return datetime.now(UTC)


class UTCDateTime(sa.TypeDecorator[datetime]):
    """`TIMESTAMP WITH TIME ZONE` that always round-trips as an aware UTC datetime."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.utcoffset() is None:
            raise ValueError("naive datetime given to the store: use fleet_rlm.store.types.utcnow() or tz-aware")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.utcoffset() is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    def __repr__(self) -> str:
        return "UTCDateTime()"


def json_type(*, nullable: bool = False) -> sa.JSON:
    """Portable JSON (JSON on Postgres, TEXT on SQLite); Python None maps to SQL NULL when nullable."""
    return sa.JSON(none_as_null=nullable)


JSONDict = dict[str, Any]
