"""Runs: idempotent creation, the status state machine, heartbeats, cancel requests, stale detection."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from fleet_rlm.store import Database, IdempotencyConflictError, InvalidTransitionError, NotFoundError
from fleet_rlm.store.repos import runs, sessions, users


async def _owner(db: Database) -> tuple[str, str]:
    async with db.transaction() as s:
        user = await users.get_or_create_user(s, name="alice")
        chat = await sessions.create_session(s, user_id=user.id)
    return user.id, chat.id


async def test_idempotency_key_returns_the_same_run_or_conflicts(db: Database) -> None:
    user_id, session_id = await _owner(db)
    async with db.transaction() as s:
        first, created = await runs.create_run(
            s,
            user_id=user_id,
            session_id=session_id,
            idempotency_key="k1",
            input_fingerprint="f1",
            budgets={"max_iterations": 5},
            execution_mode="rlm",
        )
        assert created
    async with db.transaction() as s:
        again, created_again = await runs.create_run(
            s, user_id=user_id, session_id=session_id, idempotency_key="k1", input_fingerprint="f1"
        )
    assert (again.id, created_again) == (first.id, False)
    assert again.budgets == {"max_iterations": 5} and again.execution_mode == "rlm"
    async with db.transaction() as s:
        with pytest.raises(IdempotencyConflictError) as err:
            await runs.create_run(
                s, user_id=user_id, session_id=session_id, idempotency_key="k1", input_fingerprint="f2"
            )
    assert err.value.code == "idempotency_conflict"
    async with db.transaction() as s:  # keys are per user; no key means always new
        other = await users.get_or_create_user(s, name="bob")
        other_chat = await sessions.create_session(s, user_id=other.id)
        theirs, created = await runs.create_run(s, user_id=other.id, session_id=other_chat.id, idempotency_key="k1")
        assert created and theirs.id != first.id
        a, _ = await runs.create_run(s, user_id=user_id, session_id=session_id)
        b, _ = await runs.create_run(s, user_id=user_id, session_id=session_id)
        assert a.id != b.id
        listed = await runs.list_runs(s, session_id=session_id)
        assert {r.id for r in listed} == {first.id, a.id, b.id} and listed[-1].id == first.id
        assert await runs.get_run(s, run_id=first.id, user_id=other.id) is None


async def test_status_lifecycle_stamps_times_and_refuses_leaving_terminal(db: Database) -> None:
    user_id, session_id = await _owner(db)
    async with db.transaction() as s:
        run, _ = await runs.create_run(s, user_id=user_id, session_id=session_id)
        assert run.status == "queued" and run.started_at is None
    async with db.transaction() as s:
        running = await runs.set_run_status(s, run_id=run.id, status="running", owner="pid-1@host")
        assert running.started_at is not None and running.heartbeat_at is not None and running.owner == "pid-1@host"
    async with db.transaction() as s:
        done = await runs.set_run_status(s, run_id=run.id, status="succeeded", usage={"tokens": 12}, error=None)
    assert done.status == "succeeded" and done.finished_at is not None and done.usage == {"tokens": 12}
    assert done.finished_at >= done.started_at  # type: ignore[operator]
    async with db.transaction() as s:
        with pytest.raises(InvalidTransitionError) as err:
            await runs.set_run_status(s, run_id=run.id, status="failed", error={"code": "x"})
        assert err.value.code == "invalid_run_transition" and err.value.current == "succeeded"
        with pytest.raises(NotFoundError):
            await runs.set_run_status(s, run_id="f" * 32, status="running")
        with pytest.raises(ValueError, match="unknown run status"):
            await runs.set_run_status(s, run_id=run.id, status="paused")
    async with db.session() as s:
        stored = await runs.get_run(s, run_id=run.id)
    assert stored is not None and stored.status == "succeeded" and stored.error is None


async def test_interrupted_is_final_and_failed_keeps_error(db: Database) -> None:
    """interrupted is final like succeeded/failed/cancelled: it never changes again and cannot be cancelled."""
    user_id, session_id = await _owner(db)
    async with db.transaction() as s:
        run, _ = await runs.create_run(s, user_id=user_id, session_id=session_id)
        other, _ = await runs.create_run(s, user_id=user_id, session_id=session_id)
        await runs.set_run_status(s, run_id=run.id, status="running", owner="a")
        interrupted = await runs.set_run_status(s, run_id=run.id, status="interrupted")
        assert interrupted.finished_at is not None and interrupted.outcome is None
        for target in ("queued", "running", "failed", "cancelled", "succeeded"):
            with pytest.raises(InvalidTransitionError) as err:
                await runs.set_run_status(s, run_id=run.id, status=target)
            assert err.value.current == "interrupted"
        assert await runs.request_cancel(s, run_id=run.id) is False
        failed = await runs.set_run_status(s, run_id=other.id, status="failed", error={"code": "lm_error"})
    assert failed.error == {"code": "lm_error"} and failed.outcome is None
    async with db.session() as s:
        assert [r.id for r in await runs.list_unfinished_runs(s)] == []
        assert await runs.list_active_runs(s, user_id=user_id) == []


async def test_succeeded_runs_record_complete_or_partial_outcome(db: Database) -> None:
    user_id, session_id = await _owner(db)
    async with db.transaction() as s:
        whole, _ = await runs.create_run(s, user_id=user_id, session_id=session_id)
        cut, _ = await runs.create_run(s, user_id=user_id, session_id=session_id)
        for r in (whole, cut):
            await runs.set_run_status(s, run_id=r.id, status="running")
        await runs.set_run_status(s, run_id=whole.id, status="succeeded", stop_reason="ignored unless partial")
        await runs.set_run_status(s, run_id=cut.id, status="succeeded", outcome="partial", stop_reason="max_llm_calls")
    async with db.session() as s:
        stored = {r.id: r for r in await runs.list_runs(s, session_id=session_id)}
    assert (stored[whole.id].outcome, stored[whole.id].stop_reason) == ("complete", None)
    assert (stored[cut.id].outcome, stored[cut.id].stop_reason) == ("partial", "max_llm_calls")


async def test_final_statuses_of_runs_finishing_together(db: Database) -> None:
    """The event writer's batch: runs of different outcomes (so different shapes of values) move in one call,
    each with its own last_seq and stamps; a run that is already final, or missing, raises as set_run_status."""
    user_id, session_id = await _owner(db)
    async with db.transaction() as s:
        ids = [(await runs.create_run(s, user_id=user_id, session_id=session_id, owner="o"))[0].id for _ in range(4)]
        done = (await runs.create_run(s, user_id=user_id, session_id=session_id, owner="o"))[0].id
        await runs.set_run_status(s, run_id=done, status="cancelled")
    whole, cut, failed, cancelled = ids
    finals = [
        (runs.FinalStatus(run_id=whole, status="succeeded", usage={"tokens": 3}, program_version="v2"), 7),
        (runs.FinalStatus(run_id=cut, status="succeeded", outcome="partial", stop_reason="max_llm_calls"), 9),
        (runs.FinalStatus(run_id=failed, status="failed", error={"code": "lm_error", "message": "down"}), 4),
        (runs.FinalStatus(run_id=cancelled, status="cancelled"), 2),
    ]
    async with db.transaction() as s:
        await runs.set_final_statuses(s, finals)
    async with db.session() as s:
        stored = {r.id: r for r in await runs.list_runs(s, session_id=session_id)}
    got = {rid: (r.status, r.last_seq, r.outcome, r.stop_reason) for rid, r in stored.items() if rid in ids}
    assert got == {
        whole: ("succeeded", 7, "complete", None),
        cut: ("succeeded", 9, "partial", "max_llm_calls"),
        failed: ("failed", 4, None, None),
        cancelled: ("cancelled", 2, None, None),
    }
    assert stored[whole].usage == {"tokens": 3} and stored[whole].program_version == "v2"
    assert stored[failed].error == {"code": "lm_error", "message": "down"}
    assert all(stored[rid].finished_at is not None for rid in ids)
    for bad, error in (((done, "succeeded"), InvalidTransitionError), (("f" * 32, "failed"), NotFoundError)):
        async with db.transaction() as s:
            with pytest.raises(error):
                await runs.set_final_statuses(s, [(runs.FinalStatus(run_id=bad[0], status=bad[1]), 5)])
    async with db.session() as s:
        stale = await runs.get_run(s, run_id=done)
    assert stale is not None and (stale.status, stale.last_seq) == ("cancelled", 0)


async def test_final_statuses_of_runs_finishing_alike(db: Database) -> None:
    """The common case under load: several runs end with the same shape of values (succeeded, nothing else), one
    executemany for all of them, each with its own last_seq."""
    user_id, session_id = await _owner(db)
    async with db.transaction() as s:
        ids = [(await runs.create_run(s, user_id=user_id, session_id=session_id, owner="o"))[0].id for _ in range(3)]
    async with db.transaction() as s:
        await runs.set_final_statuses(
            s, [(runs.FinalStatus(run_id=rid, status="succeeded"), n) for n, rid in enumerate(ids, 3)]
        )
    async with db.session() as s:
        stored = {r.id: r for r in await runs.list_runs(s, session_id=session_id)}
    assert [(stored[rid].status, stored[rid].last_seq, stored[rid].outcome) for rid in ids] == [
        ("succeeded", 3, "complete"),
        ("succeeded", 4, "complete"),
        ("succeeded", 5, "complete"),
    ]


async def test_heartbeat_cancel_and_stale_detection(db: Database) -> None:
    user_id, session_id = await _owner(db)
    async with db.transaction() as s:
        fresh, _ = await runs.create_run(s, user_id=user_id, session_id=session_id)
        stale, _ = await runs.create_run(s, user_id=user_id, session_id=session_id)
        queued, _ = await runs.create_run(s, user_id=user_id, session_id=session_id)
        for r in (fresh, stale):
            await runs.set_run_status(s, run_id=r.id, status="running", owner="me")
    async with db.session() as s:
        claimed = {r.id: r.heartbeat_at for r in await runs.list_runs(s, session_id=session_id)}
    async with db.transaction() as s:
        assert await runs.heartbeat(s, run_ids=[fresh.id, queued.id], owner="me") == set()  # no cancel requested
        await runs.heartbeat(s, run_ids=[stale.id], owner="someone-else")  # not its owner: nothing stamped
    async with db.session() as s:
        beaten = {r.id: r.heartbeat_at for r in await runs.list_runs(s, session_id=session_id)}
    assert beaten[fresh.id] is not None and claimed[fresh.id] is not None and beaten[fresh.id] > claimed[fresh.id]
    assert beaten[stale.id] == claimed[stale.id] and beaten[queued.id] is None  # queued: not running, not stamped
    cutoff = datetime.now(UTC) + timedelta(seconds=30)  # everything beats before this
    async with db.session() as s:
        assert {r.id for r in await runs.list_stale_runs(s, older_than=cutoff)} == {fresh.id, stale.id}
    past = datetime.now(timezone(timedelta(hours=-5))) - timedelta(hours=1)
    async with db.session() as s:
        assert await runs.list_stale_runs(s, older_than=past) == []

    async with db.transaction() as s:
        assert await runs.request_cancel(s, run_id=queued.id) is True
        assert await runs.request_cancel(s, run_id=queued.id) is True  # repeated request still pending
        await runs.set_run_status(s, run_id=stale.id, status="cancelled")
        assert await runs.request_cancel(s, run_id=stale.id) is False
        assert await runs.request_cancel(s, run_id="0" * 32) is False
        assert await runs.request_cancel(s, run_id=fresh.id) is True
        assert await runs.heartbeat(s, run_ids=[fresh.id, queued.id], owner="me") == {fresh.id, queued.id}
    async with db.session() as s:
        got = await runs.get_run(s, run_id=queued.id)
    assert got is not None and got.cancel_requested_at is not None
    assert got.cancel_requested_at.utcoffset() == timedelta(0)
