"""Fixtures the service tests share: a migrated database on the URL the suite runs against."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from fleet_rlm.store import Database, migrate


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    if database_url.startswith("sqlite"):
        await asyncio.to_thread(migrate.upgrade, database_url, "head")
    database = Database(database_url)
    try:
        yield database
    finally:
        await database.dispose()
