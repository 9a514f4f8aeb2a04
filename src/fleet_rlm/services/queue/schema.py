"""The job queue's own schema on Postgres: Procrastinate ships it (`procrastinate schema --apply`); `fleet-rlm db
upgrade` applies it when it is missing, and a server or worker in queue mode refuses to start without it."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.store.engine import create_engine


async def has_queue_schema(session: AsyncSession) -> bool:
    return bool((await session.execute(text("SELECT to_regclass('procrastinate_jobs') IS NOT NULL"))).scalar())


async def apply_queue_schema(url: str) -> bool:
    """Apply Procrastinate's schema to the Postgres database at `url` unless it is there; True when applied."""
    from procrastinate.schema import SchemaManager

    engine = create_engine(url, pooled=False)
    try:
        async with engine.begin() as conn:  # committed at the end of the block
            present = (await conn.execute(text("SELECT to_regclass('procrastinate_jobs') IS NOT NULL"))).scalar()
            if present:
                return False
            raw = await conn.get_raw_connection()
            await raw.driver_connection.execute(SchemaManager.get_schema())  # type: ignore[union-attr]
            return True
    finally:
        await engine.dispose()
