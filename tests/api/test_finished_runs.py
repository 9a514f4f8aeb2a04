"""A run that is not active reads as finished everywhere: a fork's record run is a succeeded run that a cancel
cannot touch (409 `run_finished`, not a 202 that changes nothing), and a failed turn lists as failed, with its
error, not as a turn without an answer."""

from __future__ import annotations

from fastapi.testclient import TestClient

from fleet_rlm.testing import FakeLMServer
from tests.helpers import run_turn

from .isolation import assert_error, new_session


def test_a_fork_record_is_a_finished_run_and_the_fork_takes_a_turn(client: TestClient, lm: FakeLMServer) -> None:
    origin = new_session(client, {}, "origin")
    run_turn(client, origin, {"content": "first question", "execution_mode": "direct"}, "origin-1")
    fork = client.post(f"/api/v1/sessions/{origin}/fork", json={"after_turn": 1}).json()

    record_id = fork["last_run_id"]
    record = client.get(f"/api/v1/runs/{record_id}").json()
    assert (record["execution_mode"], record["status"], record["outcome"]) == ("fork", "succeeded", "complete")
    assert record["finished_at"] and record["turn_id"] is None
    active = {item["session_id"] for item in client.get("/api/v1/sessions/state").json()["items"]}
    assert fork["id"] not in active

    body = assert_error(client.put(f"/api/v1/runs/{record_id}/cancellation"), 409, "run_finished")
    assert "nothing to stop" in body["message"] and body["action"]
    assert client.get(f"/api/v1/runs/{record_id}").json()["cancel_requested_at"] is None

    run_id, events = run_turn(client, fork["id"], {"content": "and next?", "execution_mode": "direct"}, "fork-1")
    assert events[-1]["type"] == "turn_finished"
    assert client.get(f"/api/v1/sessions/{fork['id']}").json()["last_run_id"] == run_id
    assert_error(client.put(f"/api/v1/runs/{run_id}/cancellation"), 409, "run_finished")  # any ended run
    assert_error(client.put("/api/v1/runs/no-such-run/cancellation"), 404, "not_found")


def test_failed_turns_list_as_failed_with_their_error(client: TestClient, lm: FakeLMServer) -> None:
    session = new_session(client, {}, "with a failure")
    settings = client.get(f"/api/v1/sessions/{session}").json()["settings"]
    client.patch(f"/api/v1/sessions/{session}", json={"settings": {**settings, "profile": "ghost"}})
    _, failed = run_turn(client, session, {"content": "this one fails", "execution_mode": "direct"}, "t-1")
    assert failed[-1]["type"] == "turn_failed"
    client.patch(f"/api/v1/sessions/{session}", json={"settings": settings})
    run_turn(client, session, {"content": "this one works", "execution_mode": "direct"}, "t-2")

    items = client.get(f"/api/v1/sessions/{session}/turns").json()["items"]
    assert [(t["user_message"], t["status"]) for t in items] == [
        ("this one fails", "failed"),
        ("this one works", "succeeded"),
    ]
    assert items[0]["answer"] is None and items[0]["error"]["code"] == "profile_not_found"
    assert items[1]["error"] is None

    fork = client.post(f"/api/v1/sessions/{session}/fork").json()  # inherited turns keep their run's status
    inherited = client.get(f"/api/v1/sessions/{fork['id']}/turns").json()["items"]
    assert [t["status"] for t in inherited] == ["failed", "succeeded"]
    exported = client.get(f"/api/v1/sessions/{session}/export").json()["turns"]
    assert [t["status"] for t in exported] == ["failed", "succeeded"]
