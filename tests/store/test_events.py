"""The event log: dense, monotonic seq per run (also under concurrent appends), resumable listing."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy.exc import IntegrityError

from fleet_rlm.store import Database, NotFoundError
from fleet_rlm.store.models import RunEvent
from fleet_rlm.store.repos import events, runs


async def test_append_assigns_consecutive_seq_from_one(db: Database, run_id: str) -> None:
    for i in range(5):
        async with db.transaction() as s:
            row = await events.append_event(s, run_id=run_id, type="status", payload={"i": i})
            assert row.seq == i + 1 and row.id is not None
    async with db.session() as s:
        listed = await events.list_events(s, run_id=run_id)
        run = await runs.get_run(s, run_id=run_id)
    assert [e.seq for e in listed] == [1, 2, 3, 4, 5]
    assert [e.payload for e in listed] == [{"i": i} for i in range(5)]
    assert run is not None and run.last_seq == 5


async def test_concurrent_appends_never_collide(db: Database, run_id: str) -> None:
    async def append(i: int) -> int:
        async with db.transaction() as s:
            return (await events.append_event(s, run_id=run_id, type="output", payload={"i": i})).seq

    seqs = await asyncio.gather(*(append(i) for i in range(50)))
    assert sorted(seqs) == list(range(1, 51))
    async with db.session() as s:
        stored = await events.list_events(s, run_id=run_id, limit=100)
    assert [e.seq for e in stored] == list(range(1, 51))
    assert sorted(e.payload["i"] for e in stored) == list(range(50))
    # each payload kept the seq its appender was told
    by_payload = {e.payload["i"]: e.seq for e in stored}
    assert [by_payload[i] for i in range(50)] == seqs


async def test_seq_is_per_run(db: Database, run_id: str) -> None:
    async with db.transaction() as s:
        first = await runs.get_run(s, run_id=run_id)
        assert first is not None
        other, _ = await runs.create_run(s, user_id=first.user_id, session_id=first.session_id)
        await events.append_event(s, run_id=run_id, type="a")
        assert (await events.append_event(s, run_id=other.id, type="a")).seq == 1
        assert (await events.append_event(s, run_id=run_id, type="b")).seq == 2


async def test_batch_append_and_resume_after_seq(db: Database, run_id: str) -> None:
    batch = [events.NewEvent(type="code", payload={"n": n}, depth=1, actor="rlm", parent_id="p1") for n in range(7)]
    async with db.transaction() as s:
        rows = await events.append_events(s, run_id=run_id, events=batch)
        assert [r.seq for r in rows] == list(range(1, 8))
        assert await events.append_events(s, run_id=run_id, events=[]) == []
    async with db.session() as s:
        page = await events.list_events(s, run_id=run_id, after_seq=3, limit=2)
        rest = await events.list_events(s, run_id=run_id, after_seq=page[-1].seq)
    assert [e.seq for e in page] == [4, 5]
    assert [e.seq for e in rest] == [6, 7]
    assert (rest[0].depth, rest[0].actor, rest[0].parent_id) == (1, "rlm", "p1")


async def test_event_timestamps_round_trip_tz_aware(db: Database, run_id: str) -> None:
    moment = datetime(2030, 1, 2, 3, 4, 5, 678000, tzinfo=timezone(timedelta(hours=2)))
    async with db.transaction() as s:
        await events.append_event(s, run_id=run_id, type="final", ts=moment)
        await events.append_event(s, run_id=run_id, type="final")
    async with db.session() as s:
        explicit, default = await events.list_events(s, run_id=run_id)
    assert explicit.ts == moment and explicit.ts.utcoffset() == timedelta(0)
    assert default.ts.tzinfo is not None and default.ts.utcoffset() == timedelta(0)
    assert abs(datetime.now(UTC) - default.ts) < timedelta(minutes=5)


async def test_append_to_missing_run_is_not_found(db: Database) -> None:
    async with db.transaction() as s:
        with pytest.raises(NotFoundError) as err:
            await events.append_event(s, run_id="0" * 32, type="x")
    assert err.value.code == "not_found"


async def test_duplicate_seq_is_rejected_by_the_schema(db: Database, run_id: str) -> None:
    async with db.transaction() as s:
        await events.append_event(s, run_id=run_id, type="x")
    with pytest.raises(IntegrityError):
        async with db.transaction() as s:
            s.add(RunEvent(run_id=run_id, seq=1, type="forged"))
            await s.flush()
