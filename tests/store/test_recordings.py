"""Recordings: exchanges round-trip with their bodies, bodies are stored once per hash, runs cascade, unreferenced
blobs prune, replay sets are per user and replaceable."""

from __future__ import annotations

from sqlalchemy import func
from sqlmodel import select

from fleet_rlm.store import Database
from fleet_rlm.store.models import LMBlob
from fleet_rlm.store.repos import recordings, runs, sessions, users
from fleet_rlm.store.repos.recordings import NewExchange

REQUEST = {"model": "openai/m", "messages": [{"role": "user", "content": "hi"}], "params": {}}


def exchange(seq: int, *, response: object = None, truncated: bool = False) -> NewExchange:
    return NewExchange(
        seq=seq,
        role="sub",
        actor="root",
        depth=0,
        request_hash="a" * 64,
        request=None if truncated else REQUEST,
        response=None if truncated else (response or {"outputs": ["hello"], "usage": {"prompt_tokens": 3}}),
        truncated=truncated,
        lm_params={"temperature": 0.0},
    )


async def blob_count(db: Database) -> int:
    async with db.session() as s:
        return int((await s.execute(select(func.count()).select_from(LMBlob))).scalar_one())


async def test_exchanges_round_trip_and_share_blobs(db: Database, run_id: str) -> None:
    async with db.transaction() as s:
        await recordings.save_inputs(s, run_id=run_id, inputs={"task": "t"})
        await recordings.add_exchanges(s, run_id=run_id, exchanges=[exchange(1), exchange(2)])
    async with db.transaction() as s:
        await recordings.add_exchanges(s, run_id=run_id, exchanges=[exchange(3, truncated=True)])
        await recordings.finish_recording(
            s, run_id=run_id, calls=3, size=120, truncated=True, status="succeeded", answer="ok"
        )
    assert await blob_count(db) == 2  # one request body, one response body
    async with db.session() as s:
        stored = await recordings.list_exchanges(s, run_id=run_id)
        recording = await recordings.get_recording(s, run_id=run_id)
    assert [e.seq for e in stored] == [1, 2, 3]
    assert stored[0].request == REQUEST and stored[0].response == {"outputs": ["hello"], "usage": {"prompt_tokens": 3}}
    assert stored[0].lm_params == {"temperature": 0.0}
    assert stored[2].truncated and stored[2].response is None
    assert recording is not None and recording.inputs == {"task": "t"}
    assert (recording.calls, recording.truncated, recording.answer) == (3, True, "ok")


async def test_deleting_the_session_cascades_and_blobs_prune(db: Database, run_id: str) -> None:
    async with db.transaction() as s:
        await recordings.add_exchanges(s, run_id=run_id, exchanges=[exchange(1)])
        run = await runs.get_run(s, run_id=run_id)
        assert run is not None
        await sessions.delete_session(s, user_id=run.user_id, session_id=run.session_id)
    async with db.transaction() as s:
        assert await recordings.list_exchanges(s, run_id=run_id) == []
        assert await recordings.prune_blobs(s) == 2
    assert await blob_count(db) == 0


async def test_replay_sets_are_per_user(db: Database) -> None:
    async with db.transaction() as s:
        alice = await users.get_or_create_user(s, name="alice")
        bob = await users.get_or_create_user(s, name="bob")
        await recordings.save_set(s, user_id=alice.id, name="smoke", run_ids=["r1"])
        await recordings.save_set(s, user_id=alice.id, name="smoke", run_ids=["r1", "r2"])
    async with db.transaction() as s:
        mine = await recordings.get_set(s, user_id=alice.id, name="smoke")
        assert mine is not None and mine.run_ids == ["r1", "r2"]
        assert await recordings.get_set(s, user_id=bob.id, name="smoke") is None
        assert [r.name for r in await recordings.list_sets(s, user_id=alice.id)] == ["smoke"]
        assert await recordings.delete_set(s, user_id=alice.id, name="smoke") is True
        assert await recordings.list_sets(s, user_id=alice.id) == []


async def test_one_call_mixes_known_and_new_bodies(db: Database, run_id: str) -> None:
    """A batch whose bodies are partly stored already (another run, an earlier batch) adds only the new ones."""
    async with db.transaction() as s:
        await recordings.add_exchanges(s, run_id=run_id, exchanges=[exchange(1)])
    async with db.transaction() as s:
        batch = [exchange(2), exchange(3, response={"outputs": ["other"]}), exchange(4, response={"outputs": ["x"]})]
        await recordings.add_exchanges(s, run_id=run_id, exchanges=batch)
    assert await blob_count(db) == 4  # the shared request, the first response, two new responses
    async with db.session() as s:
        stored = await recordings.list_exchanges(s, run_id=run_id)
    assert [e.response for e in stored] == [
        {"outputs": ["hello"], "usage": {"prompt_tokens": 3}},
        {"outputs": ["hello"], "usage": {"prompt_tokens": 3}},
        {"outputs": ["other"]},
        {"outputs": ["x"]},
    ]


async def test_many_runs_in_one_batch(db: Database, run_id: str) -> None:
    """The writer's group commit: recording rows of several runs in one upsert (a new row inserted, an existing
    one replaced but keeping its creation time) and their exchanges in one executemany, blobs shared across runs."""
    async with db.transaction() as s:
        run = await runs.get_run(s, run_id=run_id)
        assert run is not None
        other, _ = await runs.create_run(s, user_id=run.user_id, session_id=run.session_id)
        await recordings.save_inputs(s, run_id=run_id, inputs={"task": "first"})
    async with db.session() as s:
        before = await recordings.get_recording(s, run_id=run_id)
    assert before is not None
    totals = {"calls": 2, "bytes": 99, "truncated": False, "status": "succeeded", "answer": "done"}
    async with db.transaction() as s:
        await recordings.save_inputs_of_runs(
            s, [(run_id, {"task": "again"}, totals), (other.id, {"task": "other"}, None)]
        )
        await recordings.add_exchanges_of_runs(
            s, [(run_id, exchange(1)), (other.id, exchange(1)), (other.id, exchange(2, response={"outputs": ["x"]}))]
        )
    async with db.session() as s:
        mine = await recordings.get_recording(s, run_id=run_id)
        theirs = await recordings.get_recording(s, run_id=other.id)
        mine_exchanges = await recordings.list_exchanges(s, run_id=run_id)
        their_exchanges = await recordings.list_exchanges(s, run_id=other.id)
    assert mine is not None and theirs is not None
    assert mine.inputs == {"task": "again"} and (mine.calls, mine.status, mine.answer) == (2, "succeeded", "done")
    assert mine.created_at == before.created_at and mine.updated_at >= before.updated_at
    assert theirs.inputs == {"task": "other"} and (theirs.calls, theirs.status) == (0, None)
    assert [e.seq for e in mine_exchanges] == [1] and [e.seq for e in their_exchanges] == [1, 2]
    assert their_exchanges[1].response == {"outputs": ["x"]}
    assert await blob_count(db) == 3  # one request, two responses: shared across the runs
