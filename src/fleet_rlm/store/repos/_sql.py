"""Small SQL helpers shared by repositories (dialect-specific statements live only here)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import SQLModel

T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a listing; `total` counts all matches so clients can render pagination."""

    items: list[T]
    total: int
    limit: int
    offset: int


class Unset:
    """Marker for "leave this field as it is" in update functions (None may be a real value)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = Unset()


async def insert_ignoring_conflict(session: AsyncSession, row: SQLModel, *, conflict_columns: list[str]) -> bool:
    """INSERT `row` unless it violates the unique index on `conflict_columns`; True if it was inserted.

    Used for get-or-create under concurrency: unlike try/except IntegrityError it never aborts the
    surrounding transaction (which Postgres would otherwise poison). The row's unset (None) columns are left
    to their defaults.
    """
    table: Any = row.__table__  # type: ignore[attr-defined]
    values = {c.name: getattr(row, c.name) for c in table.columns if getattr(row, c.name, None) is not None}
    result: Any = await session.execute(_insert_ignoring(session, table, conflict_columns), values)
    return int(result.rowcount or 0) > 0


async def insert_values_ignoring_conflict(
    session: AsyncSession, table: Any, rows: list[dict[str, Any]], *, conflict_columns: list[str]
) -> None:
    """`insert_ignoring_conflict` for many rows of one table given as column dicts (hot paths skip building
    models). Rows are grouped by the columns they set, one executemany per group: the rows are parameters of
    one statement compiled once per shape (insertmanyvalues batches them), and how many were inserted is not
    known on every driver (asyncpg reports -1), so nothing is returned."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for values in rows:
        groups.setdefault(tuple(values), []).append(values)
    for group in groups.values():
        await session.execute(_insert_ignoring(session, table, conflict_columns), group)


async def upsert_values(
    session: AsyncSession,
    table: Any,
    rows: list[dict[str, Any]],
    *,
    conflict_columns: list[str],
    keep: tuple[str, ...] = (),
) -> None:
    """INSERT each row, or where it violates the unique index on `conflict_columns`, set the existing row's
    columns to the row's values (all it names except `conflict_columns` and `keep`). One executemany per shape
    of row, as `insert_values_ignoring_conflict`."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for values in rows:
        groups.setdefault(tuple(values), []).append(values)
    dialect = session.get_bind().dialect.name
    for columns, group in groups.items():
        replaced = tuple(c for c in columns if c not in conflict_columns and c not in keep)
        await session.execute(_upsert_for(dialect, table, tuple(conflict_columns), replaced), group)


@functools.cache
def _upsert_for(dialect: str, table: Any, conflict_columns: tuple[str, ...], replaced: tuple[str, ...]) -> Any:
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert(table)
    return statement.on_conflict_do_update(
        index_elements=list(conflict_columns), set_={name: statement.excluded[name] for name in replaced}
    )


def _insert_ignoring(session: AsyncSession, table: Any, conflict_columns: list[str]) -> Any:
    return _insert_ignoring_for(session.get_bind().dialect.name, table, tuple(conflict_columns))


@functools.cache
def _insert_ignoring_for(dialect: str, table: Any, conflict_columns: tuple[str, ...]) -> Any:
    """Built once per table (statements are immutable; construction was a third of a statement's cost)."""
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    return insert(table).on_conflict_do_nothing(index_elements=list(conflict_columns))
