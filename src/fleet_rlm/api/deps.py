"""Dependency aliases shared by routes (`Annotated` types, so signatures stay short and uniform)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from fleet_rlm.api.auth import CurrentUserDep, TicketUserDep
from fleet_rlm.config import Settings
from fleet_rlm.store import Database


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_database(request: Request) -> Database:
    database: Database = request.app.state.database
    return database


SettingsDep = Annotated[Settings, Depends(get_settings)]
DatabaseDep = Annotated[Database, Depends(get_database)]

__all__ = ["CurrentUserDep", "DatabaseDep", "SettingsDep", "TicketUserDep", "get_database", "get_settings"]
