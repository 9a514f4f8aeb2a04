"""Users and chat sessions: get-or-create under races, per-user scoping, paging, title search, cascades."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError, StatementError

from fleet_rlm.store import Database
from fleet_rlm.store.models import Run, RunEvent, Turn
from fleet_rlm.store.repos import events, runs, sessions, turns, users


async def test_get_or_create_user_is_idempotent_and_race_safe(db: Database) -> None:
    async def create() -> str:
        async with db.transaction() as s:
            return (await users.get_or_create_user(s, name="bob", display_name="Bob")).id

    ids = await asyncio.gather(*(create() for _ in range(8)))
    assert len(set(ids)) == 1
    async with db.session() as s:
        user = await users.get_user(s, user_id=ids[0])
        assert user is not None and user.display_name == "Bob"
        assert user.created_at.utcoffset() == timedelta(0)
        assert await users.get_user_by_name(s, name="nobody") is None


async def test_sessions_are_scoped_by_user(db: Database) -> None:
    async with db.transaction() as s:
        alice = await users.get_or_create_user(s, name="alice")
        mallory = await users.get_or_create_user(s, name="mallory")
        chat = await sessions.create_session(s, user_id=alice.id, title="Plan", settings={"mode": "rlm"})
    async with db.transaction() as s:
        assert await sessions.get_session(s, user_id=mallory.id, session_id=chat.id) is None
        assert await sessions.update_session(s, user_id=mallory.id, session_id=chat.id, title="x") is None
        assert await sessions.delete_session(s, user_id=mallory.id, session_id=chat.id) is False
        assert (await sessions.list_sessions(s, user_id=mallory.id)).total == 0
        mine = await sessions.get_session(s, user_id=alice.id, session_id=chat.id)
    assert mine is not None and mine.title == "Plan" and mine.settings == {"mode": "rlm"}


async def test_update_changes_only_given_fields(db: Database) -> None:
    async with db.transaction() as s:
        user = await users.get_or_create_user(s, name="alice")
        chat = await sessions.create_session(s, user_id=user.id, title="Old")
        before = chat.updated_at
    async with db.transaction() as s:
        updated = await sessions.update_session(
            s, user_id=user.id, session_id=chat.id, summary="short", settings={"budget": 3}
        )
    async with db.transaction() as s:
        await sessions.update_session(s, user_id=user.id, session_id=chat.id, summary=None)
    async with db.session() as s:
        fresh = await sessions.get_session(s, user_id=user.id, session_id=chat.id)
    assert updated is not None and updated.updated_at >= before
    assert fresh is not None
    assert (fresh.title, fresh.summary, fresh.settings) == ("Old", None, {"budget": 3})


async def test_list_pages_newest_first_and_searches_titles(db: Database) -> None:
    async with db.transaction() as s:
        user = await users.get_or_create_user(s, name="alice")
        titles = ["Alpha report", "beta notes", "ALPHA draft", "100% done", "under_score", "gamma"]
        created = [await sessions.create_session(s, user_id=user.id, title=t) for t in titles]
    async with db.transaction() as s:  # bump the first one to the top
        await sessions.touch_session(s, session_id=created[0].id)
    async with db.session() as s:
        first = await sessions.list_sessions(s, user_id=user.id, limit=4)
        second = await sessions.list_sessions(s, user_id=user.id, limit=4, offset=4)
        alpha = await sessions.list_sessions(s, user_id=user.id, search="alpha")
        percent = await sessions.list_sessions(s, user_id=user.id, search="%")
        underscore = await sessions.list_sessions(s, user_id=user.id, search="_")
    assert first.total == second.total == 6
    assert first.items[0].id == created[0].id
    assert len(first.items) == 4 and len(second.items) == 2
    assert {c.id for c in first.items} | {c.id for c in second.items} == {c.id for c in created}
    assert {c.title for c in alpha.items} == {"Alpha report", "ALPHA draft"}
    assert [c.title for c in percent.items] == ["100% done"]  # wildcards are escaped
    assert [c.title for c in underscore.items] == ["under_score"]


async def test_turns_are_numbered_per_session(db: Database) -> None:
    async with db.transaction() as s:
        user = await users.get_or_create_user(s, name="alice")
        a = await sessions.create_session(s, user_id=user.id)
        b = await sessions.create_session(s, user_id=user.id)
        t0 = await turns.add_turn(s, session_id=a.id, user_message="hi")
        t1 = await turns.add_turn(s, session_id=a.id, user_message="more")
        u0 = await turns.add_turn(s, session_id=b.id, user_message="other")
        await turns.update_turn(s, turn_id=t1.id, answer="42")
    async with db.session() as s:
        listed = await turns.list_turns(s, session_id=a.id)
    assert (t0.index, t1.index, u0.index) == (0, 1, 0)
    assert [(t.user_message, t.answer) for t in listed] == [("hi", None), ("more", "42")]


async def test_deleting_a_session_cascades_to_turns_runs_and_events(db: Database) -> None:
    async with db.transaction() as s:
        user = await users.get_or_create_user(s, name="alice")
        chat = await sessions.create_session(s, user_id=user.id)
        turn = await turns.add_turn(s, session_id=chat.id, user_message="q")
        run, _ = await runs.create_run(s, user_id=user.id, session_id=chat.id, turn_id=turn.id)
        await events.append_event(s, run_id=run.id, type="status")
    async with db.transaction() as s:
        assert await sessions.delete_session(s, user_id=user.id, session_id=chat.id) is True
    async with db.session() as s:
        for model in (Turn, Run, RunEvent):
            assert (await s.execute(select(func.count()).select_from(model))).scalar_one() == 0


async def test_schema_rejects_naive_datetimes_and_unknown_enum_values(db: Database) -> None:
    async with db.transaction() as s:
        user = await users.get_or_create_user(s, name="alice")
        chat = await sessions.create_session(s, user_id=user.id)
    with pytest.raises(StatementError, match="naive datetime"):
        async with db.transaction() as s:
            s.add(Run(user_id=user.id, session_id=chat.id, heartbeat_at=datetime(2030, 1, 1)))
            await s.flush()
    with pytest.raises(IntegrityError):
        async with db.transaction() as s:
            s.add(Run(user_id=user.id, session_id=chat.id, status="exploded"))
            await s.flush()
