"""Resolving the caller: users and workspaces are created once, remembered per database, roots made every time."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator

import pytest
from sqlmodel import select

from fleet_rlm.api.auth.principal import Principal, _Known, principal_for_name, principal_for_user_id
from fleet_rlm.config import Settings
from fleet_rlm.sandbox.roots import SUBDIRS
from fleet_rlm.store import Database, migrate
from fleet_rlm.store.models import User, Workspace


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    if database_url.startswith("sqlite"):
        await asyncio.to_thread(migrate.upgrade, database_url, "head")
    database = Database(database_url)
    try:
        yield database
    finally:
        await database.dispose()


async def _rows(db: Database) -> tuple[list[User], list[Workspace]]:
    async with db.session() as s:
        return list((await s.execute(select(User))).scalars()), list((await s.execute(select(Workspace))).scalars())


async def test_a_caller_resolves_to_the_same_user_and_workspace_every_time(db: Database, settings: Settings) -> None:
    first = await principal_for_name(db, settings, "ada", display_name="Ada L.")
    again = await principal_for_name(db, settings, "ada", display_name="A different name")
    by_id = await principal_for_user_id(db, settings, first.user_id)
    assert again == first and by_id is not None and by_id.workspace_id == first.workspace_id
    assert again.display_name == "Ada L."  # the name stored at creation, as the database holds it
    found_users, found_workspaces = await _rows(db)
    assert [(u.name, u.display_name) for u in found_users] == [("ada", "Ada L.")]
    assert [(w.id, w.user_id) for w in found_workspaces] == [(first.workspace_id, first.user_id)]

    other = await principal_for_name(db, settings, "grace")
    assert other.user_id != first.user_id and other.workspace_id != first.workspace_id
    assert len((await _rows(db))[0]) == 2


async def test_admin_follows_each_request_not_the_remembered_one(db: Database, settings: Settings) -> None:
    admin = await principal_for_name(db, settings, "ada", is_admin=True)
    plain = await principal_for_name(db, settings, "ada", is_admin=False)
    assert admin.is_admin and not plain.is_admin and admin.workspace_id == plain.workspace_id
    assert (await principal_for_name(db, settings, "ada", is_admin=True)).is_admin
    # by id, admin is decided from the settings (auth_mode=none: the local user is the admin)
    assert (await principal_for_user_id(db, settings, admin.user_id)).is_admin is True  # type: ignore[union-attr]


async def test_roots_are_made_again_when_something_displaced_them(db: Database, settings: Settings) -> None:
    principal = await principal_for_name(db, settings, "ada")
    root = principal.workspace_root
    assert all((root / name).is_dir() for name in SUBDIRS)
    shutil.rmtree(root / "memory")
    (root / "memory").symlink_to("/etc")  # what a hostile guest leaves behind
    await principal_for_name(db, settings, "ada")  # remembered, yet the roots are made sure of again
    assert (root / "memory").is_dir() and not (root / "memory").is_symlink()
    shutil.rmtree(root)
    await principal_for_user_id(db, settings, principal.user_id)
    assert all((root / name).is_dir() for name in SUBDIRS)


async def test_each_database_remembers_its_own_callers(database_url: str, settings: Settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    other_url = f"sqlite+aiosqlite:///{tmp_path / 'other.db'}"
    await asyncio.to_thread(migrate.upgrade, other_url, "head")
    if database_url.startswith("sqlite"):
        await asyncio.to_thread(migrate.upgrade, database_url, "head")
    one, two = Database(database_url), Database(other_url)
    try:
        a = await principal_for_name(one, settings, "ada")
        b = await principal_for_name(two, settings, "ada")
        assert a.user_id != b.user_id
        assert await principal_for_user_id(two, settings, a.user_id) is None  # unknown there, not taken from `one`
    finally:
        await one.dispose()
        await two.dispose()


def test_the_oldest_callers_are_forgotten_past_the_limit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    known = _Known(limit=2)
    people = [Principal(f"u{i}", f"name{i}", None, f"w{i}", tmp_path / f"w{i}") for i in range(3)]
    for person in people:
        known.remember(person)
    assert sorted(known.by_name) == ["name1", "name2"] and sorted(known.by_user_id) == ["u1", "u2"]
    known.remember(people[0])
    assert sorted(known.by_name) == ["name0", "name2"]
