"""Recorded LM traffic of runs (for replay) and the regression sets built from recorded runs.

Bodies are content-addressed: `lm_blobs` holds each request and response JSON once, keyed by the sha256 of its
canonical JSON (a request's key is its `request_hash`), so repeated prompts across runs cost one row. The runtime
never stores keys or auth headers in these bodies (runtime/recording.py); blobs outlive the runs that point at
them until `prune_blobs` runs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field

from fleet_rlm.store.base import (
    StoreModel,
    created_field,
    fk_field,
    id_field,
    int_field,
    json_field,
    str_field,
    text_field,
    updated_field,
)
from fleet_rlm.store.types import ID, json_type


class RunRecording(StoreModel, table=True):
    """One run's recording: the turn's inputs (task, context sources, history, options, program pins) and totals."""

    __tablename__ = "run_recordings"

    run_id: str = Field(primary_key=True, foreign_key="runs.id", ondelete="CASCADE", sa_type=ID)
    inputs: dict[str, Any] = json_field()
    calls: int = int_field(default=0)
    bytes: int = int_field(default=0, big=True)
    truncated: bool = Field(default=False, nullable=False)
    status: str | None = str_field(16, default=None, nullable=True)
    answer: str | None = text_field()
    created_at: datetime = created_field()
    updated_at: datetime = updated_field()


class LMRecording(StoreModel, table=True):
    """One LM exchange of a run, in the order the calls were made (`seq` from 1)."""

    __tablename__ = "lm_recordings"

    id: int | None = Field(default=None, primary_key=True, sa_type=sa.BigInteger().with_variant(sa.Integer(), "sqlite"))
    run_id: str = fk_field("runs.id", index=False)  # covered by uq(run_id, seq)
    seq: int = int_field()
    role: str = str_field(32)
    actor: str = str_field(255, default="root")
    depth: int = int_field(default=0)
    request_hash: str = str_field(64, index=True)
    response_hash: str | None = str_field(64, default=None, nullable=True)
    error: str | None = text_field()
    truncated: bool = Field(default=False, nullable=False)
    lm_params: dict[str, Any] = json_field()
    created_at: datetime = created_field()

    __table_args__ = (sa.UniqueConstraint("run_id", "seq"),)


class LMBlob(StoreModel, table=True):
    """A request or response body, stored once per content hash."""

    __tablename__ = "lm_blobs"

    hash: str = Field(primary_key=True, sa_type=sa.String(64))
    size: int = int_field(default=0, big=True)
    body: Any = Field(default=None, nullable=False, sa_type=json_type())
    created_at: datetime = created_field()


class ReplaySet(StoreModel, table=True):
    """A named list of recorded runs replayed together (`fleet-rlm replay --set NAME`)."""

    __tablename__ = "replay_sets"

    id: str = id_field()
    user_id: str = fk_field("users.id", index=False)  # covered by uq(user_id, name)
    name: str = str_field(255)
    run_ids: list[str] = json_field(factory=list)
    created_at: datetime = created_field()
    updated_at: datetime = updated_field()

    __table_args__ = (sa.UniqueConstraint("user_id", "name"),)
