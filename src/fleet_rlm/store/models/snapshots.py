"""Durable REPL state of runs: per-iteration snapshots, their values stored once per content hash, and the
request a run was started with (what resuming an interrupted run rebuilds its turn from).

`repl_blobs` holds each encoded value (sandbox/worker_state.py) once, keyed by the sha256 of its text, so a
value unchanged across iterations, turns or forks costs one row; `repl_snapshots` is one actor's REPL after one
iteration: name -> hash, the names not kept with why, and the cell's result as dspy received it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field

from fleet_rlm.store.base import StoreModel, created_field, fk_field, int_field, json_field, str_field
from fleet_rlm.store.types import ID


class ReplBlob(StoreModel, table=True):
    """One encoded REPL value, stored once per content hash."""

    __tablename__ = "repl_blobs"

    hash: str = Field(primary_key=True, sa_type=sa.String(64))
    size: int = int_field(default=0, big=True)
    body: str = Field(nullable=False, sa_type=sa.Text())
    created_at: datetime = created_field()


class RunReplSnapshot(StoreModel, table=True):
    """The REPL of one actor of a run (root, or child:<id>) after one iteration."""

    __tablename__ = "repl_snapshots"

    id: int | None = Field(default=None, primary_key=True, sa_type=sa.BigInteger().with_variant(sa.Integer(), "sqlite"))
    run_id: str = fk_field("runs.id", index=False)  # covered by ix(run_id, actor, iteration)
    actor: str = str_field(255, default="root")
    depth: int = int_field(default=0)
    iteration: int = int_field(default=0)
    variables: dict[str, Any] = json_field()
    skipped: dict[str, Any] = json_field()
    cell: dict[str, Any] = json_field()
    created_at: datetime = created_field()

    __table_args__ = (sa.Index(None, "run_id", "actor", "iteration"),)


class RunRequest(StoreModel, table=True):
    """What started a run (the client's turn input), kept while it may need to be resumed."""

    __tablename__ = "run_requests"

    run_id: str = Field(primary_key=True, foreign_key="runs.id", ondelete="CASCADE", sa_type=ID)
    workspace_id: str = str_field(64)
    turn_input: dict[str, Any] = json_field()
    resumes: int = int_field(default=0)
    created_at: datetime = created_field()
