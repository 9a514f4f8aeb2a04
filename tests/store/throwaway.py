"""Run a synchronous inspection (or DDL) on a database through a throwaway, unpooled engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.engine import Connection

from fleet_rlm.store.engine import create_engine

T = TypeVar("T")


async def run_on(url: str, fn: Callable[[Connection], T], *, begin: bool = False) -> T:
    """`fn(connection)` on `url`; with `begin`, inside a committed transaction (for DDL)."""
    engine = create_engine(url, pooled=False)
    try:
        connect: Any = engine.begin() if begin else engine.connect()
        async with connect as conn:
            return await conn.run_sync(fn)
    finally:
        await engine.dispose()
