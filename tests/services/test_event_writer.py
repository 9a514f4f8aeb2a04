"""Deliver first, persist in the background: a run's events reach subscribers while their transaction is still
blocked, a follower joining then reads them from the unsaved tail (nothing missed, nothing repeated), and once
the writer commits the store holds exactly seq 1..n with the terminal event last. Concurrent runs share one
transaction; a run whose rows are refused loses only its own events. Real SQLite/Postgres."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import event, update

from fleet_rlm.events import ArtifactCreated, Output, TurnFinished, Usage
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.services.live.codec import to_new_event
from fleet_rlm.services.live.follow import follow_run
from fleet_rlm.services.turns.event_writer import BACKGROUND_PARTS, EventWriter
from fleet_rlm.services.turns.final_writes import FinalWrites
from fleet_rlm.services.turns.recorder import RunRecorder
from fleet_rlm.store import Database, utcnow
from fleet_rlm.store.models import Run
from fleet_rlm.store.repos import runs as runs_repo
from fleet_rlm.store.repos import sessions, users
from fleet_rlm.store.repos.events import append_events, list_events
from fleet_rlm.store.repos.runs import FinalStatus


async def _runs(db: Database, count: int) -> tuple[str, str, list[str]]:
    async with db.transaction() as s:
        user_id = (await users.get_or_create_user(s, name="alice")).id
        session_id = (await sessions.create_session(s, user_id=user_id)).id
        runs = [
            (await runs_repo.create_run(s, user_id=user_id, session_id=session_id, owner="test"))[0].id
            for _ in range(count)
        ]
    return user_id, session_id, runs


async def _stored(db: Database, run_id: str) -> list[tuple[int, str]]:
    async with db.session() as s:
        return [(row.seq, row.type) for row in await list_events(s, run_id=run_id, after_seq=0, limit=100)]


def _final_writes(run_id: str, session_id: str) -> FinalWrites:
    """A finishing run's final writes: succeeded, its last_seq moved to the terminal event's."""
    return FinalWrites(session_id=session_id, status=FinalStatus(run_id=run_id, status="succeeded"))


def _outputs(run_id: str, session_id: str, count: int) -> list[Output]:
    return [Output(run_id=run_id, session_id=session_id, stream="stdout", text=f"line {i}") for i in range(count)]


async def _receive(queue: asyncio.Queue[list[dict[str, Any]]], count: int) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(30):
        while len(seen) < count:
            seen.extend(await queue.get())
    return seen


async def test_events_are_delivered_before_their_commit_and_a_late_follower_misses_none(db: Database) -> None:
    _, session_id, (run_id,) = await _runs(db, 1)
    bus = LocalBus()
    writer = EventWriter(db, bus)
    recorder = RunRecorder(writer, bus, run_id=run_id, session_id=session_id)
    early = bus.subscribe(run_id=run_id)
    async with db.transaction() as blocker:  # holds the run's row (Postgres) / the write lock (SQLite)
        await blocker.execute(update(Run).where(Run.id == run_id).values(heartbeat_at=utcnow()))  # type: ignore[arg-type]
        events = _outputs(run_id, session_id, 5)
        await asyncio.to_thread(lambda: [recorder.emit(e) for e in events])  # the runtime emits from a thread
        live = await _receive(early.queue, 5)
        assert [e["seq"] for e in live] == [1, 2, 3, 4, 5]
        assert await _stored(db, run_id) == []  # delivered, not committed: the writer is blocked
        late: list[dict[str, Any]] = []
        async with asyncio.timeout(30):
            async for item in follow_run(db, bus, run_id=run_id, session_id=session_id):
                late.append(item)
                if len(late) == 5:
                    break
        assert late == live  # the unsaved tail, exactly as the live subscriber saw it
    terminal = TurnFinished(run_id=run_id, session_id=session_id)
    assert await recorder.finish(terminal, _final_writes(run_id, session_id))
    assert await _stored(db, run_id) == [(1, "output"), (2, "output"), (3, "output"), (4, "output"), (5, "output"),
                                         (6, "turn_finished")]  # fmt: skip
    assert [e["seq"] for e in await _receive(early.queue, 1)] == [6]  # delivered once committed
    assert len(bus.unsaved) == 0
    after = [item async for item in follow_run(db, bus, run_id=run_id, session_id=session_id, after=3)]
    assert [e["seq"] for e in after] == [4, 5, 6]
    async with db.session() as s:
        assert (await runs_repo.get_run(s, run_id=run_id)).last_seq == 6  # type: ignore[union-attr]
    await writer.stop()


async def test_runs_share_a_transaction_and_a_refused_run_costs_only_its_own_events(db: Database) -> None:
    user_id, session_id, (good, bad) = await _runs(db, 2)
    bus = LocalBus()
    writer = EventWriter(db, bus)
    commits: list[int] = []
    event.listen(db.engine.sync_engine, "commit", lambda _conn: commits.append(1))
    recorders = {
        good: RunRecorder(writer, bus, run_id=good, session_id=session_id, user_id=user_id),
        bad: RunRecorder(writer, bus, run_id=bad, session_id=session_id, user_id="no-such-user"),
    }
    for run_id, recorder in recorders.items():  # emitted and waited on in one loop turn: one transaction for both
        for item in _outputs(run_id, session_id, 3):
            recorder.emit(item)
    assert await asyncio.gather(writer.flush(good), writer.flush(bad)) == [None, None]
    assert len(commits) == 1
    assert [seq for seq, _ in await _stored(db, good)] == [1, 2, 3]
    assert [seq for seq, _ in await _stored(db, bad)] == [1, 2, 3]
    artifact = {"name": "a.txt", "path": "artifacts/a.txt", "size_bytes": 1, "sha256": "0" * 64}
    for run_id, recorder in recorders.items():  # the bad run's artifact row is refused (no such user)
        recorder.emit(ArtifactCreated(run_id=run_id, session_id=session_id, **artifact))
        recorder.emit(Output(run_id=run_id, session_id=session_id, stream="stdout", text="after"))
    assert await writer.flush(good) is None
    assert await writer.flush(bad) is not None
    assert [t for _, t in await _stored(db, good)] == ["output"] * 3 + ["artifact_created", "output"]
    assert [t for _, t in await _stored(db, bad)] == ["output"] * 3
    await writer.stop()


async def test_running_runs_usage_goes_in_their_shared_transaction(db: Database, caplog: Any) -> None:
    """Each running run's latest usage lands in `runs.usage` in the one transaction the runs share (a statement
    that cannot take several runs made every such transaction fail and be redone run by run)."""
    user_id, session_id, runs = await _runs(db, 3)
    bus = LocalBus()
    writer = EventWriter(db, bus)
    commits: list[int] = []
    event.listen(db.engine.sync_engine, "commit", lambda _conn: commits.append(1))
    for n, run_id in enumerate(runs, start=1):
        recorder = RunRecorder(writer, bus, run_id=run_id, session_id=session_id, user_id=user_id)
        recorder.emit(Usage(run_id=run_id, session_id=session_id, tokens_in=10 * n, tokens_out=n, lm_calls=n))
    with caplog.at_level("WARNING", logger="fleet_rlm.services.turns.event_writer"):
        assert await asyncio.gather(*(writer.flush(run_id) for run_id in runs)) == [None] * 3
    assert commits == [1]
    assert not [r for r in caplog.records if "run by run" in r.getMessage()]
    async with db.session() as s:
        stored = [await runs_repo.get_run(s, run_id=run_id) for run_id in runs]
    assert [(r.usage or {}).get("tokens_in") for r in stored if r is not None] == [10, 20, 30]
    assert [r.last_seq for r in stored if r is not None] == [1, 1, 1]
    await writer.stop()


async def test_runs_finishing_together_share_one_transaction(db: Database, caplog: Any) -> None:
    """Under load many runs end alike (succeeded, same values): their final writes, terminal events and answers go
    in one transaction (a final-status UPDATE that could not run as an executemany made every such transaction
    fail and be redone run by run, holding each turn_finished back for several commits)."""
    user_id, session_id, runs = await _runs(db, 4)
    bus = LocalBus()
    writer = EventWriter(db, bus)
    commits: list[int] = []
    event.listen(db.engine.sync_engine, "commit", lambda _conn: commits.append(1))
    recorders = [RunRecorder(writer, bus, run_id=run_id, session_id=session_id, user_id=user_id) for run_id in runs]
    for recorder in recorders:
        recorder.emit(Output(run_id=recorder.run_id, session_id=session_id, stream="stdout", text="done"))
    finishing = [
        recorder.finish(
            TurnFinished(run_id=recorder.run_id, session_id=session_id), _final_writes(recorder.run_id, session_id)
        )
        for recorder in recorders
    ]
    with caplog.at_level("WARNING", logger="fleet_rlm.services.turns.event_writer"):
        assert await asyncio.gather(*finishing) == [True] * len(runs)
    assert commits == [1]
    assert not [r for r in caplog.records if "run by run" in r.getMessage()]
    assert [await _stored(db, run_id) for run_id in runs] == [[(1, "output"), (2, "turn_finished")]] * len(runs)
    async with db.session() as s:
        stored = [await runs_repo.get_run(s, run_id=run_id) for run_id in runs]
    assert [(r.status, r.last_seq) for r in stored if r is not None] == [("succeeded", 2)] * len(runs)
    await writer.stop()


async def test_a_finishing_run_is_written_alone_and_the_others_follow_a_few_at_a_time(db: Database) -> None:
    """Parts nobody waits on never lengthen a waited-on run's transaction; once due they are written in bounded
    transactions (BACKGROUND_PARTS each), oldest first, until none is left."""
    user_id, session_id, (finishing, *running) = await _runs(db, 1 + 2 * BACKGROUND_PARTS + 1)
    bus = LocalBus()
    # The others' window is long enough that none falls due while the finishing run commits, however slow the
    # machine (with the default 0.1 s a loaded CI could write them first); the loop below waits it out.
    writer = EventWriter(db, bus, persist_after_s=2.0)
    commits: list[int] = []
    event.listen(db.engine.sync_engine, "commit", lambda _conn: commits.append(1))
    recorders = {run_id: RunRecorder(writer, bus, run_id=run_id, session_id=session_id) for run_id in running}
    for run_id, recorder in recorders.items():
        for item in _outputs(run_id, session_id, 2):
            recorder.emit(item)
    ending = RunRecorder(writer, bus, run_id=finishing, session_id=session_id, user_id=user_id)
    ending.emit(Output(run_id=finishing, session_id=session_id, stream="stdout", text="last"))
    terminal = TurnFinished(run_id=finishing, session_id=session_id)
    assert await ending.finish(terminal, _final_writes(finishing, session_id))
    assert commits == [1]  # the finishing run's transaction held nobody else's events
    assert await _stored(db, finishing) == [(1, "output"), (2, "turn_finished")]
    assert [await _stored(db, run_id) for run_id in running] == [[]] * len(running)
    async with asyncio.timeout(30):
        while [await _stored(db, run_id) for run_id in running] != [[(1, "output"), (2, "output")]] * len(running):
            await asyncio.sleep(0.02)
    assert len(commits) == 1 + 3  # 17 running runs, at most 8 per transaction
    assert len(bus.unsaved) == 0
    await writer.stop()


async def test_a_lone_event_of_a_quiet_run_is_stored_without_anything_after_it(db: Database) -> None:
    """A run that emits one event and then nothing for a long time (a slow cell) still gets it stored within
    about PERSIST_AFTER_S, every time: the writer's timer may fire a little early, and nothing else wakes it."""
    _, session_id, run_ids = await _runs(db, 12)
    bus = LocalBus()
    writer = EventWriter(db, bus)
    for run_id in run_ids:
        recorder = RunRecorder(writer, bus, run_id=run_id, session_id=session_id)
        recorder.emit(Output(run_id=run_id, session_id=session_id, stream="stdout", text="tick"))
        async with asyncio.timeout(5):
            while await _stored(db, run_id) != [(1, "output")]:
                await asyncio.sleep(0.01)
    await writer.stop()


async def test_a_running_runs_events_are_stored_without_a_flush_and_stop_writes_what_is_pending(db: Database) -> None:
    """Nobody waits on a running run's events (they were delivered), so the writer may hold them briefly; it still
    stores them on its own (a crash loses at most that window), and stopping the writer stores what is left."""
    _, session_id, (run_id, other) = await _runs(db, 2)
    bus = LocalBus()
    writer = EventWriter(db, bus)
    recorder = RunRecorder(writer, bus, run_id=run_id, session_id=session_id)
    for item in _outputs(run_id, session_id, 3):
        recorder.emit(item)
    async with asyncio.timeout(30):
        while await _stored(db, run_id) != [(1, "output"), (2, "output"), (3, "output")]:
            await asyncio.sleep(0.02)
    async with db.session() as s:
        assert (await runs_repo.get_run(s, run_id=run_id)).last_seq == 3  # type: ignore[union-attr]
    assert len(bus.unsaved) == 0
    late = RunRecorder(writer, bus, run_id=other, session_id=session_id)
    late.emit(Output(run_id=other, session_id=session_id, stream="stdout", text="last words"))
    await asyncio.sleep(0)  # the emit reaches the writer
    await writer.stop()
    assert await _stored(db, other) == [(1, "output")]


async def test_a_follower_of_a_run_recorded_here_reads_no_database_and_ends_when_the_run_is_final_there(
    db: Database,
) -> None:
    """A run this process records is followed from the bus's unsaved tail: while it records, quiet intervals read
    neither its events nor its status. When its recording stops without a terminal event on the bus (its final
    transaction failed, or another replica finalized it), the follower finds the run final in the database and
    reads the terminal event from there instead of ending without it."""
    user_id, session_id, (run_id,) = await _runs(db, 1)
    bus = LocalBus()
    bus.unsaved.begin_run(run_id, 0)
    writer = EventWriter(db, bus)
    recorder = RunRecorder(writer, bus, run_id=run_id, session_id=session_id, user_id=user_id)
    reads: list[str] = []
    event.listen(db.engine.sync_engine, "before_cursor_execute", lambda *args: reads.append(args[2]))
    seen: list[dict[str, Any]] = []

    async def follow() -> None:
        async for item in follow_run(db, bus, run_id=run_id, session_id=session_id, poll_s=0.05):
            seen.append(item)

    follower = asyncio.get_running_loop().create_task(follow())
    for item in _outputs(run_id, session_id, 2):
        recorder.emit(item)
    async with asyncio.timeout(30):
        while len(seen) < 2:
            await asyncio.sleep(0.01)
    assert not [sql for sql in reads if "run_events" in sql and sql.lstrip().upper().startswith("SELECT")]
    await writer.flush(run_id)
    async with db.transaction() as s:  # the run ends in the database only: its terminal event is never delivered
        await runs_repo.set_run_status(s, run_id=run_id, status="succeeded")
        await append_events(s, run_id=run_id, events=[to_new_event(TurnFinished(run_id=run_id, session_id=session_id))])
    reads.clear()
    await asyncio.sleep(0.5)  # several quiet intervals (poll_s=0.05) while the run is still recorded here
    assert not follower.done()
    assert not [sql for sql in reads if sql.lstrip().upper().startswith("SELECT")]
    bus.unsaved.end_run(run_id)  # the recording stops, as after a failed final transaction
    async with asyncio.timeout(30):
        await follower
    assert [(e["seq"], e["type"]) for e in seen] == [(1, "output"), (2, "output"), (3, "turn_finished")]
    await writer.stop()
