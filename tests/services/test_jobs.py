"""The job system shared by turns and optimization runs: progress reaches a follower through the bus (no polling
query while nothing changes), a durable cancel on the row reaches the job, and one sweeper interrupts stale or
dead-owner jobs of both kinds. Real SQLite/Postgres; on Postgres the follower listens on another "replica"'s bus."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event, update

from fleet_rlm.events.status import FINAL
from fleet_rlm.services.jobs.follow import follow_job
from fleet_rlm.services.jobs.heartbeat import Heartbeats
from fleet_rlm.services.jobs.job import Job
from fleet_rlm.services.jobs.owner import process_owner
from fleet_rlm.services.jobs.sweep import sweep
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.services.live.pg_bus import PostgresBus
from fleet_rlm.services.optimization_jobs import OptimizationJobs
from fleet_rlm.services.turns.recovery import TurnJobs
from fleet_rlm.store import Database, utcnow
from fleet_rlm.store.models import OptimizationRun, Run
from fleet_rlm.store.repos import optimization as opt_repo
from fleet_rlm.store.repos import runs as runs_repo
from fleet_rlm.store.repos import sessions, users
from fleet_rlm.store.repos.events import list_events

OLD_POLL_S = 0.5  # the optimization stream used to re-read the run this often


@pytest.fixture
async def buses(database_url: str) -> AsyncIterator[tuple[LocalBus, LocalBus]]:
    """(the bus of the replica running the job, the bus its follower listens on)."""
    if not database_url.startswith("postgresql"):
        bus = LocalBus()
        yield bus, bus
        return
    running, following = PostgresBus(database_url), PostgresBus(database_url)
    await running.start()
    await following.start()
    try:
        yield running, following
    finally:
        await running.stop()
        await following.stop()


async def _user(db: Database) -> str:
    async with db.transaction() as s:
        return (await users.get_or_create_user(s, name="alice")).id


async def _optimization_run(db: Database, user_id: str) -> str:
    async with db.transaction() as s:
        return (await opt_repo.create_run(s, user_id=user_id, module="direct", dataset_id=None, config={})).id


async def test_progress_reaches_a_follower_on_notice_not_by_polling(
    db: Database, buses: tuple[LocalBus, LocalBus]
) -> None:
    running_bus, follower_bus = buses
    run_id = await _optimization_run(db, await _user(db))
    kind = OptimizationJobs(db, running_bus)
    beats = Heartbeats(kind, db, owner=process_owner(), interval_s=60)
    job = Job(kind, db, running_bus, job_id=run_id, owner=process_owner(), heartbeats=beats, on_cancel=lambda: None)
    loads = 0

    async def load() -> OptimizationRun:
        nonlocal loads
        loads += 1
        async with db.session() as s:
            row = await opt_repo.get_run(s, run_id=run_id)
        assert row is not None
        return row

    seen: asyncio.Queue[tuple[float, OptimizationRun]] = asyncio.Queue()

    async def follow() -> None:
        async for row in follow_job(follower_bus, job.channel, load, is_final=lambda r: r.status in FINAL):
            await seen.put((time.monotonic(), row))

    async with job.running():
        follower = asyncio.create_task(follow())
        _, first = await asyncio.wait_for(seen.get(), 5)
        assert first.status == "running" and first.owner == process_owner() and first.heartbeat_at is not None
        await asyncio.sleep(3 * OLD_POLL_S)
        assert loads == 1  # idle: no query ran (the old stream would have read the run three times)

        sent = time.monotonic()
        await asyncio.to_thread(job.report, {"phase": "optimizing", "iteration": 1})  # from a worker thread
        arrived, row = await asyncio.wait_for(seen.get(), 5)
        assert row.progress == {"phase": "optimizing", "iteration": 1}
        assert arrived - sent < OLD_POLL_S / 2, f"progress took {arrived - sent:.3f}s"
        assert loads == 2

    async with db.transaction() as s:
        await opt_repo.set_status(s, run_id=run_id, status="succeeded")
    await job.announce()
    await asyncio.wait_for(follower, 5)
    _, final = await seen.get()
    assert final.status == "succeeded" and loads == 3


async def test_a_durable_cancel_on_the_row_reaches_the_job_by_its_heartbeat(db: Database) -> None:
    run_id = await _optimization_run(db, await _user(db))
    bus = LocalBus()
    cancelled = threading.Event()
    kind = OptimizationJobs(db, bus)
    beats = Heartbeats(kind, db, owner="me", interval_s=0.1)
    job = Job(kind, db, bus, job_id=run_id, owner="me", heartbeats=beats, on_cancel=cancelled.set)
    async with job.running():
        async with db.transaction() as s:
            assert await opt_repo.request_cancel(s, run_id=run_id)  # e.g. by another replica, its bus message lost
        assert await asyncio.to_thread(cancelled.wait, 5)


async def test_one_beat_stamps_every_running_job_of_the_server_and_hears_each_cancel(db: Database) -> None:
    """One transaction per beat for all of this server's turns (not one per turn), and the beat stops with them."""
    user_id = await _user(db)
    async with db.transaction() as s:
        session_id = (await sessions.create_session(s, user_id=user_id)).id
        run_ids = [(await runs_repo.create_run(s, user_id=user_id, session_id=session_id))[0].id for _ in range(3)]
    bus = LocalBus()
    kind = TurnJobs(db, bus)
    beats = Heartbeats(kind, db, owner="me", interval_s=0.1)
    cancelled = {run_id: threading.Event() for run_id in run_ids}
    beats_sent: list[str] = []

    def count_beats(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.startswith("UPDATE runs SET") and "heartbeat_at=" in statement:
            beats_sent.append(statement)

    event.listen(db.engine.sync_engine, "before_cursor_execute", count_beats)  # SQLAlchemy's own hook
    try:
        jobs = [Job(kind, db, bus, job_id=r, owner="me", heartbeats=beats, on_cancel=cancelled[r].set) for r in run_ids]
        async with jobs[0].running(), jobs[1].running(), jobs[2].running():
            async with db.transaction() as s:
                assert await runs_repo.request_cancel(s, run_id=run_ids[1])
            assert await asyncio.to_thread(cancelled[run_ids[1]].wait, 5)
            before = len(beats_sent)
            await asyncio.sleep(0.55)
            beats_seen = len(beats_sent) - before
            async with db.session() as s:
                stamped = [await runs_repo.get_run(s, run_id=r) for r in run_ids]
        assert all(run is not None and run.heartbeat_at is not None for run in stamped)
        assert 2 <= beats_seen <= 7, beats_seen  # ~5 beats of 0.1 s, each one UPDATE for all three runs
        assert not cancelled[run_ids[0]].is_set() and not cancelled[run_ids[2]].is_set()
        idle = len(beats_sent)
        await asyncio.sleep(0.35)
        assert len(beats_sent) == idle, "no job left: the heartbeat stopped"
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", count_beats)


def _dead_owner() -> str:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return f"{process_owner().rpartition(':')[0]}:{child.pid}"


async def test_one_sweeper_interrupts_stale_and_dead_owner_jobs_of_both_kinds(db: Database) -> None:
    user_id = await _user(db)
    async with db.transaction() as s:
        session_id = (await sessions.create_session(s, user_id=user_id)).id
        turns = []
        for _ in range(3):
            run, _ = await runs_repo.create_run(s, user_id=user_id, session_id=session_id)
            turns.append(run.id)
    optimizations = [await _optimization_run(db, user_id) for _ in range(4)]
    stale_turn, live_turn, dead_turn = turns
    stale_opt, live_opt, dead_opt, local_opt = optimizations
    long_ago = utcnow() - timedelta(hours=1)
    async with db.transaction() as s:
        for run_id, owner in ((stale_turn, "other-host:1"), (live_turn, "other-host:2"), (dead_turn, _dead_owner())):
            await runs_repo.set_run_status(s, run_id=run_id, status="running", owner=owner)
        for run_id, owner in ((stale_opt, "other-host:3"), (live_opt, "other-host:4"), (dead_opt, _dead_owner())):
            await opt_repo.set_status(s, run_id=run_id, status="running", owner=owner)
        await opt_repo.set_status(s, run_id=local_opt, status="running", owner="other-host:5")
        await s.execute(update(Run).where(Run.id == stale_turn).values(heartbeat_at=long_ago))  # type: ignore[arg-type]
        stale_rows = OptimizationRun.id.in_([stale_opt, local_opt])  # type: ignore[attr-defined]
        await s.execute(update(OptimizationRun).where(stale_rows).values(heartbeat_at=long_ago))

    bus = LocalBus()
    kind = OptimizationJobs(db, bus, active={local_opt})  # running in this process: never swept
    notices = bus.subscribe(run_id=f"optimization:{stale_opt}")
    swept = await sweep(db, [TurnJobs(db, bus), kind], current_owner=process_owner(), stale_after_s=30)
    assert swept == 4

    async with db.session() as s:
        turn_status = {r: (await runs_repo.get_run(s, run_id=r)).status for r in turns}  # type: ignore[union-attr]
        opt_rows = {r: await opt_repo.get_run(s, run_id=r) for r in optimizations}
        events = await list_events(s, run_id=stale_turn, after_seq=0, limit=10)
    assert turn_status == {stale_turn: "interrupted", live_turn: "running", dead_turn: "interrupted"}
    status: dict[str, Any] = {r: row.status for r, row in opt_rows.items() if row is not None}
    assert status == {stale_opt: "interrupted", live_opt: "running", dead_opt: "interrupted", local_opt: "running"}
    assert opt_rows[stale_opt].error["code"] == "optimization_interrupted"  # type: ignore[union-attr,index]
    assert [e.type for e in events] == ["turn_interrupted"]
    assert [n["type"] for n in notices.queue.get_nowait()] == ["job_finished"]  # its followers end now
