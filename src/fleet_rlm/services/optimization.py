"""Glue between the app and `fleet_rlm.optimize`: the DB-backed program registry turns use, and the
OptimizationService with the caller's LMs (their profiles and role bindings, else the server's settings)."""

from __future__ import annotations

import asyncio

from fleet_rlm.config import Settings
from fleet_rlm.optimize.modules import LMProvider
from fleet_rlm.optimize.programs_db import DatabasePrograms
from fleet_rlm.runtime.lms import settings_provider
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.services.lms import load_config, turn_lm_provider
from fleet_rlm.services.optimization_runs import OptimizationService
from fleet_rlm.store import Database


async def make_programs(database: Database) -> DatabasePrograms:
    programs = DatabasePrograms(database, asyncio.get_running_loop())
    await programs.refresh()
    return programs


def make_optimization(
    settings: Settings, database: Database, bus: LocalBus, programs: DatabasePrograms, *, owner: str
) -> OptimizationService:
    async def provider_for(user_id: str) -> LMProvider:
        async with database.session() as s:
            config = await load_config(s, user_id=user_id)
        return turn_lm_provider(settings, config) or settings_provider(settings)

    return OptimizationService(settings, database, bus, lm_provider_for=provider_for, programs=programs, owner=owner)
