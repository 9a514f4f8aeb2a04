"""Runs: creation with idempotency keys, the status state machine, heartbeats, cancel requests.

Status changes are single conditional UPDATEs (`WHERE status IN allowed`, `events.status.ALLOWED_FROM`), so
two replicas racing to finish or cancel a run cannot both win, and a final run (interrupted included) never
changes again.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, case, or_, update
from sqlalchemy import select as sa_select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.events.status import ACTIVE, ALLOWED_FROM, RunOutcome, RunStatus, parse_status
from fleet_rlm.store.errors import IdempotencyConflictError, InvalidTransitionError, NotFoundError
from fleet_rlm.store.models import Run
from fleet_rlm.store.repos._sql import insert_ignoring_conflict
from fleet_rlm.store.types import utcnow


async def create_run(
    session: AsyncSession,
    *,
    user_id: str,
    session_id: str,
    turn_id: str | None = None,
    execution_mode: str = "auto",
    idempotency_key: str | None = None,
    input_fingerprint: str | None = None,
    budgets: dict[str, Any] | None = None,
    program_version: str | None = None,
    run_id: str | None = None,
    owner: str | None = None,
) -> tuple[Run, bool]:
    """Create a queued run — or, with an `owner`, one already running and claimed by it (a turn its server
    executes at once: the claim `claim_run` would make, epoch 1, in the same INSERT); returns (run, created).

    With an `idempotency_key` already used by this user: the earlier run is returned with created=False
    when the fingerprints match, else IdempotencyConflictError is raised.
    """
    row = Run(
        user_id=user_id,
        session_id=session_id,
        turn_id=turn_id,
        execution_mode=execution_mode,
        idempotency_key=idempotency_key,
        input_fingerprint=input_fingerprint,
        budgets=budgets or {},
        program_version=program_version,
    )
    if run_id is not None:
        row.id = run_id
    if owner is not None:
        now = utcnow()
        row.status, row.owner, row.started_at, row.heartbeat_at = RunStatus.RUNNING.value, owner, now, now
        row.claim_epoch = 1
    if idempotency_key is None:
        session.add(row)
        await session.flush()
        return row, True
    inserted = await insert_ignoring_conflict(session, row, conflict_columns=["user_id", "idempotency_key"])
    existing = await find_idempotent_run(session, user_id=user_id, idempotency_key=idempotency_key)
    assert existing is not None  # inserted now, or by the request that won the race
    if inserted:
        return existing, True
    if existing.input_fingerprint != input_fingerprint:
        raise IdempotencyConflictError(idempotency_key)
    return existing, False


async def find_idempotent_run(session: AsyncSession, *, user_id: str, idempotency_key: str) -> Run | None:
    """The user's run created with this Idempotency-Key, if any."""
    result = await session.execute(_BY_KEY, {"user_id": user_id, "key": idempotency_key})
    return result.scalar_one_or_none()


async def active_run_id(session: AsyncSession, *, session_id: str, other_than: str | None = None) -> str | None:
    """A queued or running run of the session other than `other_than`, if there is one (one turn at a time)."""
    params = {"session_id": session_id, "other_than": other_than or ""}  # ids are never empty
    return (await session.execute(_ACTIVE_OTHER, params)).scalar_one_or_none()


# built once: a turn's start runs these (construction was a third of a statement's cost)
_BY_KEY = select(Run).where(col(Run.user_id) == bindparam("user_id"), col(Run.idempotency_key) == bindparam("key"))
_ACTIVE_OTHER = (
    select(Run.id)
    .where(col(Run.session_id) == bindparam("session_id"), col(Run.status).in_(ACTIVE))
    .where(col(Run.id) != bindparam("other_than"))
    .limit(1)
)


async def get_run(session: AsyncSession, *, run_id: str, user_id: str | None = None) -> Run | None:
    """The run, or None; with `user_id` a run of another user is also None."""
    run = await session.get(Run, run_id, populate_existing=True)
    if run is None or (user_id is not None and run.user_id != user_id):
        return None
    return run


async def list_runs(session: AsyncSession, *, session_id: str, limit: int = 50) -> list[Run]:
    """Newest first."""
    result = await session.execute(
        select(Run)
        .where(col(Run.session_id) == session_id)
        .order_by(col(Run.created_at).desc(), col(Run.id).desc())
        .limit(limit)
    )
    return list(result.scalars())


async def list_active_runs(session: AsyncSession, *, user_id: str, limit: int = 1000) -> list[Run]:
    """The user's queued or running runs, newest first (what a client shows as "in progress")."""
    result = await session.execute(
        select(Run)
        .where(col(Run.user_id) == user_id, col(Run.status).in_(ACTIVE))
        .order_by(col(Run.created_at).desc(), col(Run.id).desc())
        .limit(limit)
    )
    return list(result.scalars())


def _status_values(
    target: RunStatus,
    now: datetime,
    *,
    owner: str | None = None,
    error: dict[str, Any] | None = None,
    usage: dict[str, Any] | None = None,
    outcome: RunOutcome | None = None,
    stop_reason: str | None = None,
    program_version: str | None = None,
    last_seq: int | None = None,
) -> dict[str, Any]:
    """The columns a move to `target` sets (the one place the stamping rules live)."""
    values: dict[str, Any] = {"status": target.value}
    if target is RunStatus.RUNNING:
        values.update(started_at=now, heartbeat_at=now, finished_at=None)
    elif target is not RunStatus.QUEUED:
        values["finished_at"] = now
    if target is RunStatus.SUCCEEDED:
        values.update(outcome=outcome or "complete", stop_reason=stop_reason if outcome == "partial" else None)
    if owner is not None:
        values["owner"] = owner
    if error is not None:
        values["error"] = error
    if usage is not None:
        values["usage"] = usage
    if program_version is not None:
        values["program_version"] = program_version
    if last_seq is not None:  # a finishing run's terminal event, stored in the same transaction
        values["last_seq"] = last_seq
    return values


async def set_run_status(
    session: AsyncSession,
    *,
    run_id: str,
    status: str,
    owner: str | None = None,
    error: dict[str, Any] | None = None,
    usage: dict[str, Any] | None = None,
    outcome: RunOutcome | None = None,
    stop_reason: str | None = None,
    program_version: str | None = None,
) -> Run:
    """Move the run to `status` (stamping started/finished/heartbeat); raises InvalidTransitionError.

    A succeeded run records its `outcome` (complete unless given; partial with the `stop_reason` budget). One
    UPDATE ... RETURNING. Turns that finish go through `set_final_statuses`, in the event writer's transaction."""
    target = parse_status(status)
    values = _status_values(
        target,
        utcnow(),
        owner=owner,
        error=error,
        usage=usage,
        outcome=outcome,
        stop_reason=stop_reason,
        program_version=program_version,
    )
    result: Any = await session.execute(
        update(Run)
        .where(col(Run.id) == run_id, col(Run.status).in_(ALLOWED_FROM[target]))
        .values(**values)
        .returning(Run)
        .execution_options(synchronize_session=False, populate_existing=True)
    )
    run: Run | None = result.scalars().one_or_none()
    if run is not None:
        return run
    current = await session.get(Run, run_id, populate_existing=True)
    if current is None:
        raise NotFoundError("run", run_id)
    raise InvalidTransitionError(run_id, current.status, status)


async def claim_run(session: AsyncSession, *, run_id: str, owner: str) -> Run:
    """Move a queued run to running, owned by `owner`, with a new claim epoch (one UPDATE ... RETURNING); every
    later write of the run is fenced by that (owner, epoch). Raises InvalidTransitionError when it is not queued
    (cancelled meanwhile, or claimed already)."""
    values = _status_values(RunStatus.RUNNING, utcnow(), owner=owner)
    result: Any = await session.execute(
        update(Run)
        .where(col(Run.id) == run_id, col(Run.status) == RunStatus.QUEUED.value)
        .values(**values, claim_epoch=col(Run.claim_epoch) + 1)
        .returning(Run)
        .execution_options(synchronize_session=False, populate_existing=True)
    )
    run: Run | None = result.scalars().one_or_none()
    if run is not None:
        return run
    current = await session.get(Run, run_id, populate_existing=True)
    if current is None:
        raise NotFoundError("run", run_id)
    raise InvalidTransitionError(run_id, current.status, RunStatus.RUNNING.value)


Fence = tuple[str, int]
"""(owner, claim epoch) of a running run: what its writer proves before each write."""


async def fenced_out(session: AsyncSession, fences: dict[str, Fence]) -> set[str]:
    """Lock the rows of `fences`' runs for this transaction (Postgres; SQLite has one writer) and return the ids
    whose claim moved: no longer running, or claimed by another owner or epoch. Their writes must be refused; an
    interrupt or a takeover that committed first made them stale, one that comes later waits for this commit."""
    if not fences:
        return set()
    rows = await session.execute(_FENCE_CHECK, {"b_ids": sorted(fences)})
    current = {str(row[0]): (row[1], row[2], row[3]) for row in rows}
    return {
        run_id
        for run_id, (owner, epoch) in fences.items()
        if current.get(run_id) != (RunStatus.RUNNING.value, owner, epoch)
    }


@dataclass(frozen=True)
class FinalStatus:
    """A finishing run's final status and what goes with it (`set_run_status`'s arguments, as data)."""

    run_id: str
    status: str
    error: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    outcome: RunOutcome | None = None
    stop_reason: str | None = None
    program_version: str | None = None


async def set_final_statuses(session: AsyncSession, finals: Sequence[tuple[FinalStatus, int]]) -> None:
    """`set_run_status` for runs finishing in one transaction, each also storing its terminal event's seq as
    `last_seq`: one executemany per shape of values, then one read that checks every run moved. A run that was
    already final (or is gone) raises as `set_run_status` does, failing the transaction: the event writer then
    retries run by run, so only that run's writes are refused. The check compares status and `last_seq`: no one else
    stores this run's terminal seq."""
    if not finals:
        return
    now = utcnow()
    targets = [parse_status(final.status) for final, _ in finals]
    groups: dict[tuple[RunStatus, tuple[str, ...]], list[dict[str, Any]]] = {}
    for (final, last_seq), target in zip(finals, targets, strict=True):
        values = _status_values(
            target,
            now,
            error=final.error,
            usage=final.usage,
            outcome=final.outcome,
            stop_reason=final.stop_reason,
            program_version=final.program_version,
            last_seq=last_seq,
        )
        params = {"b_id": final.run_id, **{f"b_{name}": value for name, value in values.items()}}
        groups.setdefault((target, tuple(values)), []).append(params)
    for (target, names), rows in groups.items():
        await session.execute(_final_update(target, names), rows)
    ids = [final.run_id for final, _ in finals]
    found = {row[0]: (row[1], row[2]) for row in await session.execute(_FINAL_CHECK, {"b_ids": ids})}
    for (final, last_seq), target in zip(finals, targets, strict=True):
        got = found.get(final.run_id)
        if got is None:
            raise NotFoundError("run", final.run_id)
        if got != (target.value, last_seq):
            raise InvalidTransitionError(final.run_id, got[0], final.status)


@functools.cache
def _final_update(target: RunStatus, names: tuple[str, ...]) -> Any:
    """One shape's UPDATE, run as an executemany: `status IN (...)` is spelled as ORs, since an IN's expanding
    parameter refuses executemany (every transaction in which two runs finished alike failed and was redone run
    by run)."""
    values = {name: bindparam(f"b_{name}", type_=_RUNS.c[name].type) for name in names}
    allowed = or_(*(_RUNS.c.status == status for status in sorted(ALLOWED_FROM[target])))
    return update(_RUNS).where(_RUNS.c.id == bindparam("b_id"), allowed).values(values)


async def record_progress(session: AsyncSession, progress: Collection[tuple[str, int, dict[str, Any] | None]]) -> None:
    """(run_id, last seq stored, latest usage or None) of running runs: each run's `last_seq`, and its usage while
    it is unfinished (so a run that dies mid-turn still shows what it spent), in one executemany per shape."""
    seq_only = [{"b_run": run_id, "b_seq": seq} for run_id, seq, usage in progress if usage is None]
    now = utcnow()
    with_usage = [
        {"b_run": run_id, "b_seq": seq, "b_usage": usage, "b_now": now}
        for run_id, seq, usage in progress
        if usage is not None
    ]
    if seq_only:
        await session.execute(_SEQ, seq_only)
    if with_usage:
        await session.execute(_SEQ_AND_USAGE, with_usage)


_RUNS: Any = Run.__table__  # type: ignore[attr-defined]
_FINAL_CHECK = sa_select(_RUNS.c.id, _RUNS.c.status, _RUNS.c.last_seq).where(
    _RUNS.c.id.in_(bindparam("b_ids", expanding=True))
)
_FENCE_CHECK = (
    sa_select(_RUNS.c.id, _RUNS.c.status, _RUNS.c.owner, _RUNS.c.claim_epoch)
    .where(_RUNS.c.id.in_(bindparam("b_ids", expanding=True)))
    .order_by(_RUNS.c.id)  # one lock order for every writer
    .with_for_update()
)
_SEQ = update(_RUNS).where(_RUNS.c.id == bindparam("b_run")).values(last_seq=bindparam("b_seq"))
_SEQ_AND_USAGE = _SEQ.values(  # `status IN (...)` spelled as ORs: an IN's expanding parameter refuses executemany
    usage=case(
        (or_(*(_RUNS.c.status == status for status in ACTIVE)), bindparam("b_usage", type_=_RUNS.c.usage.type)),
        else_=_RUNS.c.usage,
    ),
    updated_at=bindparam("b_now"),
)


async def set_run_trace(session: AsyncSession, *, run_id: str, trace_id: str, span_id: str) -> bool:
    """Remember the OpenTelemetry trace (and root span) a run is exported as, so clients can link to it."""
    result: Any = await session.execute(
        update(Run)
        .where(col(Run.id) == run_id)
        .values(trace_id=trace_id, span_id=span_id)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)


async def heartbeat(session: AsyncSession, *, run_ids: Collection[str], owner: str | None = None) -> set[str]:
    """Stamp heartbeat_at on those of `run_ids` that are running (owned by `owner`, when given), in one UPDATE.

    Returns the ids among them that carry a durable cancel request (`request_cancel`), so one beat both proves
    the runs alive and hears of cancels recorded by any replica.
    """
    if not run_ids:
        return set()
    ids = list(run_ids)
    conditions = [col(Run.id).in_(ids), col(Run.status) == RunStatus.RUNNING]
    if owner is not None:
        conditions.append(col(Run.owner) == owner)
    await session.execute(
        update(Run).where(*conditions).values(heartbeat_at=utcnow()).execution_options(synchronize_session=False)
    )
    rows = await session.execute(
        select(col(Run.id)).where(col(Run.id).in_(ids), col(Run.cancel_requested_at).is_not(None))
    )
    return {str(row[0]) for row in rows}


async def request_cancel(session: AsyncSession, *, run_id: str) -> bool:
    """Record a durable cancel request any replica can see; False if the run already finished."""
    result: Any = await session.execute(
        update(Run)
        .where(
            col(Run.id) == run_id,
            col(Run.status).in_(ACTIVE),
            col(Run.cancel_requested_at).is_(None),
        )
        .values(cancel_requested_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    if result.rowcount:
        return True
    run = await session.get(Run, run_id, populate_existing=True)
    return run is not None and run.status in ACTIVE


async def list_stale_runs(session: AsyncSession, *, older_than: datetime, limit: int = 100) -> list[Run]:
    """Running runs whose last heartbeat (or creation, if none) is before `older_than`: their owner died."""
    result = await session.execute(
        select(Run)
        .where(
            col(Run.status) == RunStatus.RUNNING,
            or_(
                col(Run.heartbeat_at) < older_than,
                and_(col(Run.heartbeat_at).is_(None), col(Run.created_at) < older_than),
            ),
        )
        .order_by(col(Run.heartbeat_at))
        .limit(limit)
    )
    return list(result.scalars())


async def list_unfinished_runs(session: AsyncSession, *, limit: int = 1000) -> list[Run]:
    """Queued or running runs of every user, oldest first (crash recovery inspects their owners)."""
    result = await session.execute(
        select(Run).where(col(Run.status).in_(ACTIVE)).order_by(col(Run.created_at), col(Run.id)).limit(limit)
    )
    return list(result.scalars())


async def take_over_run(session: AsyncSession, *, run_id: str, owner: str, previous_owner: str | None) -> Run | None:
    """Claim a running run whose owner died for `owner` (fenced on the owner it had: of two servers resuming it,
    one wins), with a new claim epoch: the old owner's writes, should it wake, are refused by both; the run with
    its new owner, or None when it moved meanwhile."""
    result: Any = await session.execute(
        update(Run)
        .where(col(Run.id) == run_id, col(Run.status) == RunStatus.RUNNING, col(Run.owner) == previous_owner)
        .values(owner=owner, heartbeat_at=utcnow(), claim_epoch=col(Run.claim_epoch) + 1)
        .returning(Run)
        .execution_options(synchronize_session=False, populate_existing=True)
    )
    run: Run | None = result.scalars().one_or_none()
    return run
