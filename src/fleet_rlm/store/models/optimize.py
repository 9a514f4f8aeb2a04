"""Offline optimization: datasets, GEPA optimization runs and the program versions they produce."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from fleet_rlm.events.status import RunStatus
from fleet_rlm.store.base import (
    StoreModel,
    created_field,
    fk_field,
    id_field,
    in_check,
    int_field,
    json_field,
    str_field,
    text_field,
    time_field,
    updated_field,
)


class Dataset(StoreModel, table=True):
    """Examples for one module: small ones inline in `rows`, large ones in a JSONL file at `path`."""

    __tablename__ = "datasets"

    id: str = id_field()
    user_id: str = fk_field("users.id", index=False)  # covered by uq(user_id, module, name)
    module: str = str_field(255)
    name: str = str_field(255)
    row_count: int = int_field(default=0)
    path: str | None = text_field()
    rows: list[dict[str, Any]] | None = json_field(nullable=True)
    created_at: datetime = created_field()
    updated_at: datetime = updated_field()

    __table_args__ = (sa.UniqueConstraint("user_id", "module", "name"),)


class OptimizationRun(StoreModel, table=True):
    """One GEPA run over a dataset; `program_version` names the version it produced, if any; `results` holds the
    per-example baseline/optimized outputs; `cancel_requested_at` is the durable cancel any replica sees; `owner`
    (host:pid) and `heartbeat_at` let the job sweeper tell a live run from one whose server died."""

    __tablename__ = "optimization_runs"

    id: str = id_field()
    user_id: str = fk_field("users.id")
    module: str = str_field(255, index=True)
    dataset_id: str | None = fk_field("datasets.id", ondelete="SET NULL", nullable=True)
    status: str = str_field(16, default=RunStatus.QUEUED.value)
    owner: str | None = str_field(255, default=None, nullable=True)
    config: dict[str, Any] = json_field()
    progress: dict[str, Any] = json_field()
    scores: dict[str, Any] = json_field()
    error: dict[str, Any] | None = json_field(nullable=True)
    program_version: str | None = str_field(255, default=None, nullable=True)
    results: dict[str, Any] | None = json_field(nullable=True)
    created_at: datetime = created_field()
    updated_at: datetime = updated_field()
    finished_at: datetime | None = time_field()
    heartbeat_at: datetime | None = time_field()
    cancel_requested_at: datetime | None = time_field()

    __table_args__ = (in_check("status", tuple(RunStatus), name="status"),)


class ProgramVersion(StoreModel, table=True):
    """A saved (optimized) program of a module, owned by the user whose optimization run produced it. Which
    version a user's turns run is decided by `ProgramPromotion` rows, not by the version itself."""

    __tablename__ = "program_versions"

    id: str = id_field()
    user_id: str | None = fk_field("users.id", ondelete="SET NULL", nullable=True)
    module: str = str_field(255)
    version: str = str_field(64)
    path: str | None = text_field()
    program: dict[str, Any] | None = json_field(nullable=True)
    manifest: dict[str, Any] = json_field()
    created_at: datetime = created_field()

    __table_args__ = (sa.UniqueConstraint("module", "version"),)


class ProgramPromotion(StoreModel, table=True):
    """A version promoted in one scope: `user_id` is the user whose turns run it, NULL means every user (an
    admin's global promotion). The scope's current version is its latest promotion not yet withdrawn; a rollback
    stamps `withdrawn_at`, so the one promoted before it applies again."""

    __tablename__ = "program_promotions"

    id: str = id_field()
    version_id: str = fk_field("program_versions.id")
    module: str = str_field(255, index=True)
    user_id: str | None = fk_field("users.id", nullable=True)
    promoted_by: str | None = fk_field("users.id", ondelete="SET NULL", nullable=True, index=False)
    promoted_at: datetime = created_field()
    withdrawn_at: datetime | None = time_field()
