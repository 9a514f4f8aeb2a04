"""Migration 0013 keeps one rating per user and run: each user's latest row survives, `updated_at` is its
`created_at`, and the unique constraint then refuses a second row (SQLite and Postgres)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from fleet_rlm.store import migrate
from tests.store.throwaway import run_on

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _filler(column: dict[str, Any]) -> Any:
    kind = column["type"]
    if isinstance(kind, sa.DateTime):
        return T0
    if isinstance(kind, sa.Integer | sa.Float | sa.Numeric):
        return 0
    if isinstance(kind, sa.Boolean):
        return False
    if isinstance(kind, sa.JSON):
        return {}
    return "x"


def _insert(connection: Connection, table: str, **values: Any) -> None:
    """A row with the given values and a plain filler in every other required column (as the schema was then)."""
    columns = sa.inspect(connection).get_columns(table)
    row = {c["name"]: _filler(c) for c in columns if not c["nullable"] and c.get("default") is None}
    row.update(values)
    meta = sa.Table(table, sa.MetaData(), *(sa.Column(c["name"], c["type"]) for c in columns))
    connection.execute(meta.insert().values(**row))


def _seed(connection: Connection) -> None:
    for user in ("alice", "bob"):
        _insert(connection, "users", id=user, name=user)
    _insert(connection, "sessions", id="s1", user_id="alice", workspace_id=None)
    _insert(connection, "runs", id="r1", session_id="s1", user_id="alice", turn_id=None, status="succeeded")
    ratings = [("f1", "alice", "up", 0), ("f2", "alice", "down", 1), ("f3", "bob", "up", 2), ("f4", "alice", "up", 3)]
    for row_id, user, rating, minutes in ratings:
        stamp = T0 + timedelta(minutes=minutes)
        _insert(connection, "trace_feedback", id=row_id, run_id="r1", user_id=user, rating=rating, created_at=stamp)


async def test_latest_rating_per_user_survives_and_is_unique(db_url: str, is_sqlite: bool) -> None:
    if is_sqlite:
        Path(db_url.split("///", 1)[1]).parent.mkdir(parents=True)
    await migrate.upgrade_async(db_url, "0012")
    await run_on(db_url, _seed, begin=True)
    await migrate.upgrade_async(db_url, "head")

    query = "SELECT id, user_id, rating, created_at, updated_at FROM trace_feedback ORDER BY id"
    rows = await run_on(db_url, lambda c: [tuple(r) for r in c.execute(sa.text(query))])
    assert [(r[0], r[1], r[2]) for r in rows] == [("f3", "bob", "up"), ("f4", "alice", "up")]
    assert all(str(r[3]) == str(r[4]) for r in rows)  # updated_at starts as created_at
    with pytest.raises(sa.exc.IntegrityError):
        await run_on(
            db_url,
            lambda c: _insert(c, "trace_feedback", id="f5", run_id="r1", user_id="bob", rating="down"),
            begin=True,
        )
    await migrate.downgrade_async(db_url, "0012")
    await run_on(
        db_url, lambda c: _insert(c, "trace_feedback", id="f5", run_id="r1", user_id="bob", rating="down"), begin=True
    )
