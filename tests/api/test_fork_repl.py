"""A fork keeps the REPL: each RLM iteration stores a snapshot of the REPL's variables (values once per content
hash), and a session forked after turn N starts its sandbox with the variables as they were after turn N; a
value that is not plain data (an open socket) is named as not restored in a `repl_restored` event."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from fleet_rlm.store import Database
from fleet_rlm.store.repos import snapshots as snapshots_repo
from fleet_rlm.testing import FakeLMServer
from tests.helpers import run_turn
from tests.security.harness import CellScript

from .isolation import new_session, on_app

DEFINE = (
    "x = {'a': [1, 2], 'b': (3, 'c')}\n"
    "rows = [{'id': i, 'v': i * 1.5} for i in range(5)]\n"
    "import socket\nsock = socket.socket()\nprint('made')"
)
UNCHANGED = "y = 1\nprint('x is untouched')"


@pytest.fixture
def cells() -> CellScript:
    return CellScript()


@pytest.fixture
def lm(cells: CellScript) -> Iterator[FakeLMServer]:
    with FakeLMServer(rule=cells) as server:
        yield server


def _snapshots(client: TestClient, run_id: str) -> list:
    async def read(db: Database) -> list:
        async with db.session() as s:
            return await snapshots_repo.list_snapshots(s, run_id=run_id)

    return on_app(client, read)


def _blob_count(client: TestClient) -> int:
    async def read(db: Database) -> int:
        async with db.session() as s:
            return await snapshots_repo.count_blobs(s)

    return on_app(client, read)


def test_a_fork_starts_with_the_repl_of_its_fork_point(client: TestClient, cells: CellScript) -> None:
    origin = new_session(client, {}, "repl")
    first, events = run_turn(client, origin, {"content": cells.register("one", DEFINE), "execution_mode": "rlm"}, "k1")
    assert events[-1]["type"] == "turn_finished", events[-3:]
    snaps = _snapshots(client, first)
    assert [s.iteration for s in snaps] == [1, 2]  # the SUBMIT cell too
    assert set(snaps[0].variables) == {"x", "rows", "socket"} and set(snaps[0].skipped) == {"sock"}, snaps[0].skipped
    assert snaps[0].cell == {"kind": "ok", "text": "made"}
    blobs = _blob_count(client)

    second, _ = run_turn(client, origin, {"content": cells.register("two", UNCHANGED), "execution_mode": "rlm"}, "k2")
    later = _snapshots(client, second)
    assert later[0].variables["x"] == snaps[0].variables["x"]  # the same value is the same hash...
    assert _blob_count(client) == blobs + 1  # ...and costs no new row: only y's value is new

    # an origin turn after the fork point changes x: the fork must not see that
    run_turn(client, origin, {"content": cells.register("three", "x = 'changed'"), "execution_mode": "rlm"}, "k3")
    fork = client.post(f"/api/v1/sessions/{origin}/fork", json={"after_turn": 2}).json()
    check = "assert x == {'a': [1, 2], 'b': (3, 'c')} and rows[4] == {'id': 4, 'v': 6.0} and y == 1\nprint('kept', x)"
    run_id, events = run_turn(
        client, fork["id"], {"content": cells.register("fork", check), "execution_mode": "rlm"}, "k4"
    )
    assert events[-1]["type"] == "turn_finished", events[-3:]
    outputs = [e["text"] for e in events if e["type"] == "output"]
    assert outputs and outputs[0].startswith("kept {'a': [1, 2]"), outputs
    (restored,) = [e for e in events if e["type"] == "repl_restored"]
    assert restored["source"] == "fork" and restored["source_run_id"] == second
    assert set(restored["restored"]) == {"x", "rows", "socket", "y"}
    assert "sock" in restored["not_restored"] and "socket" in restored["not_restored"]["sock"]

    # the fork's later turns use its own live REPL: no second restore
    _, events = run_turn(
        client, fork["id"], {"content": cells.register("again", "print(y)"), "execution_mode": "rlm"}, "k5"
    )
    assert not [e for e in events if e["type"] == "repl_restored"]
    assert run_id != first
