"""Runs (one execution of a turn), their append-only event log, and user feedback on traces."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field

from fleet_rlm.events.status import RunOutcome, RunStatus
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
from fleet_rlm.store.types import UTCDateTime, json_type, utcnow

OUTCOMES: tuple[RunOutcome, ...] = ("complete", "partial")
RATINGS = ("up", "down")


class Run(StoreModel, table=True):
    """One execution. `last_seq` is the per-run event counter: append_event bumps it in the same transaction
    as the insert, so the row lock serializes concurrent appends for one run on every backend. A succeeded run
    has an `outcome`: complete, or partial when the budget named by `stop_reason` stopped it."""

    __tablename__ = "runs"

    id: str = id_field()
    session_id: str = fk_field("sessions.id", index=False)  # covered by ix(session_id, created_at)
    user_id: str = fk_field("users.id", index=False)  # covered by uq(user_id, idempotency_key)
    turn_id: str | None = fk_field("turns.id", ondelete="SET NULL", nullable=True)
    status: str = str_field(16, default=RunStatus.QUEUED.value)
    outcome: str | None = str_field(16, default=None, nullable=True)
    stop_reason: str | None = str_field(64, default=None, nullable=True)
    execution_mode: str = str_field(16, default="auto")
    owner: str | None = str_field(255, default=None, nullable=True)
    claim_epoch: int = int_field(default=0)  # bumped by every claim; a running run's writes carry (owner, epoch)
    idempotency_key: str | None = str_field(255, default=None, nullable=True)
    input_fingerprint: str | None = str_field(128, default=None, nullable=True)
    program_version: str | None = str_field(255, default=None, nullable=True)
    budgets: dict[str, Any] = json_field()
    usage: dict[str, Any] = json_field()
    error: dict[str, Any] | None = json_field(nullable=True)
    last_seq: int = int_field(default=0)
    trace_id: str | None = str_field(32, default=None, nullable=True)  # OpenTelemetry trace of the run, when traced
    span_id: str | None = str_field(16, default=None, nullable=True)  # its root span
    created_at: datetime = created_field()
    updated_at: datetime = updated_field()
    started_at: datetime | None = time_field()
    finished_at: datetime | None = time_field()
    heartbeat_at: datetime | None = time_field()
    cancel_requested_at: datetime | None = time_field()

    __table_args__ = (
        sa.UniqueConstraint("user_id", "idempotency_key"),
        sa.Index(None, "session_id", "created_at"),
        sa.Index(None, "status", "heartbeat_at"),
        in_check("status", tuple(RunStatus), name="status"),
        in_check("outcome", OUTCOMES, name="outcome"),
    )


class QueueWorker(StoreModel, table=True):
    """A `fleet-rlm worker` process on the job queue (queue execution on Postgres): its turn slots and the
    Procrastinate worker row whose heartbeat says it is alive. Written when it starts, deleted when it stops."""

    __tablename__ = "queue_workers"

    name: str = Field(primary_key=True, max_length=255, sa_type=sa.String(255))
    queue_worker_id: int | None = int_field(default=None, nullable=True, big=True)  # procrastinate_workers.id, turns
    optimization_worker_id: int | None = int_field(default=None, nullable=True, big=True)  # ... of its optimizations
    turn_slots: int = int_field(default=1)
    optimization_slots: int = int_field(default=1)
    started_at: datetime = created_field()


class RunEvent(StoreModel, table=True):
    """One event as clients saw it; `seq` is dense and monotonic per run, rows are never updated."""

    __tablename__ = "run_events"

    id: int | None = Field(default=None, primary_key=True, sa_type=sa.BigInteger().with_variant(sa.Integer(), "sqlite"))
    run_id: str = fk_field("runs.id", index=False)  # covered by uq(run_id, seq)
    seq: int = int_field()
    type: str = str_field(64)
    ts: datetime = Field(default_factory=utcnow, nullable=False, sa_type=UTCDateTime())
    depth: int = int_field(default=0)
    actor: str | None = str_field(255, default=None, nullable=True)
    parent_id: str | None = str_field(64, default=None, nullable=True)
    payload: dict[str, Any] = Field(default_factory=dict, nullable=False, sa_type=json_type())

    __table_args__ = (sa.UniqueConstraint("run_id", "seq"),)


class TraceFeedback(StoreModel, table=True):
    """A user's thumbs up/down on a run, optionally with a comment and the answer they expected (their
    correction; feeds GEPA datasets). One per user and run: rating again replaces it."""

    __tablename__ = "trace_feedback"

    id: str = id_field()
    run_id: str = fk_field("runs.id")
    user_id: str = fk_field("users.id")
    rating: str = str_field(8)
    comment: str | None = text_field()
    expected_answer: str | None = text_field()
    created_at: datetime = created_field()
    updated_at: datetime = updated_field()

    __table_args__ = (sa.UniqueConstraint("run_id", "user_id"), in_check("rating", RATINGS, name="rating"))
