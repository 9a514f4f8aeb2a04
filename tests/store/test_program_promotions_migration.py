"""Migration 0004 on data: versions promoted while promotions were global stay in effect for every user (they
become global promotions, the earlier one kept for rollback), each version gets its run's owner, and a
downgrade restores the old columns. SQLite and Postgres."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from fleet_rlm.store import Database, migrate
from fleet_rlm.store.repos import programs

T1 = datetime(2026, 1, 1, tzinfo=UTC)
T2 = datetime(2026, 1, 2, tzinfo=UTC)

SEED = [
    "INSERT INTO users (id, name, created_at, updated_at) VALUES ('u1', 'alice', :t1, :t1)",
    "INSERT INTO optimization_runs (id, user_id, module, status, config, progress, scores, program_version,"
    " created_at, updated_at) VALUES ('r1', 'u1', 'direct', 'succeeded', '{}', '{}', '{}', 'direct-v1', :t1, :t1)",
    "INSERT INTO optimization_runs (id, user_id, module, status, config, progress, scores, program_version,"
    " created_at, updated_at) VALUES ('r2', 'u1', 'direct', 'succeeded', '{}', '{}', '{}', 'direct-v2', :t1, :t1)",
    "INSERT INTO program_versions (id, module, version, program, manifest, promoted, promoted_at, created_at)"
    " VALUES ('v1', 'direct', 'direct-v1', '{}', '{}', false, :t1, :t1)",
    "INSERT INTO program_versions (id, module, version, program, manifest, promoted, promoted_at, created_at)"
    " VALUES ('v2', 'direct', 'direct-v2', '{}', '{}', true, :t2, :t1)",
    "INSERT INTO program_versions (id, module, version, program, manifest, promoted, promoted_at, created_at)"
    " VALUES ('v3', 'router', 'router-v1', '{}', '{}', false, NULL, :t1)",
]


async def _execute(url: str, statements: list[str]) -> None:
    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            for sql in statements:
                await conn.execute(sa.text(sql), {"t1": T1, "t2": T2})
    finally:
        await engine.dispose()


async def test_legacy_promotions_become_global(db_url: str, is_sqlite: bool) -> None:
    if is_sqlite:
        Path(db_url.split("///", 1)[1]).parent.mkdir(parents=True)
    await migrate.upgrade_async(db_url, "0003")
    await _execute(db_url, SEED)
    await migrate.upgrade_async(db_url, "0004")
    db = Database(db_url)
    try:
        async with db.transaction() as s:
            for user in ("u1", "someone-else"):
                assert {m: v.version for m, v in (await programs.in_effect(s, user_id=user)).items()} == {
                    "direct": "direct-v2"
                }
            owners = {v.version: v.user_id for v in await programs.visible_versions(s, user_id="u1")}
            assert owners == {"direct-v1": "u1", "direct-v2": "u1"}, "owners backfilled from their runs"
            back = await programs.rollback(s, module="direct", scope=None)
            assert back is not None and back.version_id == "v1", "the earlier promotion is kept for rollback"
    finally:
        await db.dispose()
    await migrate.downgrade_async(db_url, "0003")
    assert await migrate.current_async(db_url) == "0003"
