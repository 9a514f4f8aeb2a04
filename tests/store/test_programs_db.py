"""`DatabasePrograms`, the runtime's registry of promoted program versions: turn threads that find the global
promoted set stale at the same moment (a burst of turns after a quiet spell) wait for one refresh, not one each.
Real SQLite/Postgres."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import event

from fleet_rlm.optimize.programs_db import DatabasePrograms
from fleet_rlm.runtime.programs import RLM_ACTION
from fleet_rlm.store import Database
from fleet_rlm.store.repos import programs as repo


async def test_turns_that_find_the_promoted_set_stale_together_wait_for_one_refresh(db: Database) -> None:
    async with db.transaction() as s:
        program = {"runtime": {RLM_ACTION: "Be brief."}}
        await repo.add_version(s, user_id=None, module=RLM_ACTION, version="action-v1", program=program, manifest={})
        await repo.promote(s, module=RLM_ACTION, version="action-v1", scope=None, promoted_by=None)
    programs = DatabasePrograms(db, asyncio.get_running_loop())  # nothing loaded yet: stale for every thread
    statements: list[str] = []
    event.listen(db.engine.sync_engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(20) as threads:
        specs: list[Any] = await asyncio.gather(
            *(loop.run_in_executor(threads, programs.get, RLM_ACTION) for _ in range(20))
        )
    assert {(spec.version, spec.instructions) for spec in specs} == {("action-v1", "Be brief.")}
    assert len([sql for sql in statements if "FROM program_promotions" in sql]) == 1
    statements.clear()
    assert programs.get(RLM_ACTION) == specs[0]  # fresh now: answered from the cache
    assert statements == []
