"""A session holds the context its turns added: a file attached on turn 1 is in turn 2's `context` (the model's
request) and CONTEXT_DIR (the sandbox) without being uploaded again; removed from the session, turn 3 has
neither. A fork holds the sources of the turns it kept; bad removals get stable error codes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from fleet_rlm.config import Settings
from fleet_rlm.testing import FakeLMServer, rlm_step, rlm_submit
from tests.helpers import run_turn

from .isolation import assert_error, new_session

SALES = "region,amount\nnorth,SALES-MARKER-1234\nsouth,17\n"
LOOK = (
    "import json, os\n"
    "names = sorted(os.listdir(CONTEXT_DIR))\n"
    "texts = [open(os.path.join(CONTEXT_DIR, n)).read() for n in names if n.endswith('.txt')]\n"
    "print('SEEN=' + json.dumps({'names': names, 'marker': any('SALES-MARKER' in t for t in texts),"
    " 'in_context': 'SALES-MARKER' in context}))"
)


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer() as server:  # answers only what a test pushes (no adapter rule that submits at once)
        yield server


def _rlm_turn(client: TestClient, lm: FakeLMServer, sid: str, key: str, **body: Any) -> tuple[dict[str, Any], str]:
    """One rlm turn whose code lists CONTEXT_DIR; returns (what the cell saw, the model's prompts)."""
    before = len(lm.requests)
    lm.push(rlm_step("Look at the context.", LOOK), rlm_submit(answer="looked"))
    _, events = run_turn(client, sid, {"content": "how much did north sell?", "execution_mode": "rlm", **body}, key)
    assert events[-1]["type"] == "turn_finished", events[-3:]
    output = "\n".join(e.get("text", "") for e in events if e["type"] == "output")
    seen = json.loads(output.split("SEEN=", 1)[1].splitlines()[0])
    prompts = "\n".join(request.text for request in lm.requests[before:])
    return seen, prompts


def _upload(client: TestClient, sid: str) -> str:
    made = client.post(
        "/api/v1/attachments", files={"file": ("sales.csv", SALES.encode(), "text/csv")}, data={"session_id": sid}
    )
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def test_an_attachment_stays_in_the_sessions_context_until_removed(
    client: TestClient, lm: FakeLMServer, app_settings: Settings
) -> None:
    sid = new_session(client, {}, "sales")
    first, prompts = _rlm_turn(client, lm, sid, "t1", attachment_ids=[_upload(client, sid)])
    assert first["marker"] and first["in_context"] and "SALES-MARKER-1234" in prompts

    second, prompts = _rlm_turn(client, lm, sid, "t2")  # a follow-up: nothing attached again
    assert second["marker"] and second["in_context"], second
    assert "SALES-MARKER-1234" in prompts and "added on turn 1" in prompts
    assert second["names"] == first["names"]  # the same document, not a second copy

    (held,) = client.get(f"/api/v1/sessions/{sid}/context").json()["items"]
    assert (held["name"], held["turn"], held["source"]) == ("sales.csv", 1, "attachment")
    assert held["document"] in first["names"] and held["id"]
    context_dir = app_settings.data_dir / "sessions" / sid / "context"
    assert [p.name for p in context_dir.glob("*sales*")] == [held["document"]]

    removed = client.delete(f"/api/v1/sessions/{sid}/context/{held['id']}")
    assert removed.status_code == 204, removed.text
    assert client.get(f"/api/v1/sessions/{sid}/context").json()["items"] == []

    third, prompts = _rlm_turn(client, lm, sid, "t3")
    assert not third["marker"] and not third["in_context"] and held["document"] not in third["names"], third
    assert "SALES-MARKER-1234" not in prompts
    assert_error(client.delete(f"/api/v1/sessions/{sid}/context/{held['id']}"), 404, "context_source_not_found")
    assert_error(client.delete(f"/api/v1/sessions/nope/context/{held['id']}"), 404, "not_found")


def test_a_fork_holds_the_sources_of_the_turns_it_kept(client: TestClient, lm: FakeLMServer) -> None:
    sid = new_session(client, {}, "fork sources")
    _rlm_turn(client, lm, sid, "f1", attachment_ids=[_upload(client, sid)])
    _rlm_turn(client, lm, sid, "f2", context_text="LATER-PASTE words")
    origin = client.get(f"/api/v1/sessions/{sid}/context").json()["items"]
    assert [(item["turn"], item["source"]) for item in origin] == [(1, "attachment"), (2, "text")]

    fork = client.post(f"/api/v1/sessions/{sid}/fork", json={"after_turn": 1}).json()
    (kept,) = client.get(f"/api/v1/sessions/{fork['id']}/context").json()["items"]
    assert (kept["name"], kept["turn"]) == ("sales.csv", 1) and kept["id"] != origin[0]["id"]
    assert client.delete(f"/api/v1/sessions/{sid}").status_code == 204  # the fork keeps its own links

    seen, prompts = _rlm_turn(client, lm, fork["id"], "f3")
    assert seen["marker"] and seen["in_context"] and "LATER-PASTE" not in prompts
