"""Forks: a session forked after turn N has the origin's first N turns (their runs readable), its next turn
sees only that history, its first event says what is shared, and only the owner can fork."""

from __future__ import annotations

from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.testing import FakeLMServer
from tests.helpers import run_turn

from .isolation import assert_error, bearer, new_session, seed_run, token_settings


def test_fork_after_turn_one_of_three_sees_only_that_turn(client: TestClient, lm: FakeLMServer) -> None:
    origin = new_session(client, {}, "three turns")
    run_ids = []
    for index in range(3):
        body = {"content": f"message number {index}", "execution_mode": "direct"}
        run_ids.append(run_turn(client, origin, body, f"origin-{index}")[0])

    response = client.post(f"/api/v1/sessions/{origin}/fork", json={"after_turn": 1})
    assert response.status_code == 201, response.text
    fork = response.json()
    assert (fork["forked_from_id"], fork["forked_after_turn"]) == (origin, 1)
    assert fork["title"] == "three turns (fork after turn 1)" and fork["id"] != origin

    origin_events = client.get(f"/api/v1/runs/{run_ids[0]}/events").json()["items"]
    summary_after_turn_1 = next(e["text"] for e in origin_events if e["type"] == "summary")
    assert fork["summary"] == summary_after_turn_1  # not the origin's latest summary (written by turn 3)

    turns = client.get(f"/api/v1/sessions/{fork['id']}/turns").json()
    assert turns["total"] == 1
    (inherited,) = turns["items"]
    assert (inherited["user_message"], inherited["answer"], inherited["run_id"]) == (
        "message number 0",
        "forty-two",
        run_ids[0],
    )
    events = client.get(f"/api/v1/runs/{run_ids[0]}/events").json()["items"]
    assert events[-1]["type"] == "turn_finished"  # the inherited turn's trace is readable from the fork

    (forked,) = client.get(f"/api/v1/runs/{fork['last_run_id']}/events").json()["items"]
    assert forked["type"] == "session_forked" and forked["session_id"] == fork["id"]
    assert (forked["origin_session_id"], forked["after_turn"], forked["origin_turns"]) == (origin, 1, 3)
    assert any("REPL's variables" in line for line in forked["shared"])
    assert any("not plain data" in line for line in forked["not_shared"])
    assert any("workspace" in line for line in forked["shared"])

    detail = client.get(f"/api/v1/sessions/{origin}").json()
    assert [(f["id"], f["forked_after_turn"]) for f in detail["forks"]] == [(fork["id"], 1)]
    assert detail["forked_from_id"] is None and client.get(f"/api/v1/sessions/{fork['id']}").json()["forks"] == []

    before = len(lm.requests)
    run_turn(client, fork["id"], {"content": "what did I ask?", "execution_mode": "direct"}, "fork-next")
    prompts = "\n".join(request.text for request in lm.requests[before:])
    assert "what did I ask?" in prompts and "message number 0" in prompts
    assert "message number 1" not in prompts and "message number 2" not in prompts
    assert "Earlier turns of this session (1, oldest first)" in prompts

    turns_after = client.get(f"/api/v1/sessions/{fork['id']}/turns").json()["items"]
    assert [t["index"] for t in turns_after] == [0, 1]
    assert len(client.get(f"/api/v1/sessions/{origin}/turns").json()["items"]) == 3  # the origin is untouched

    bundle = client.get(f"/api/v1/sessions/{fork['id']}/export").json()
    exported_runs = {run["id"] for run in bundle["runs"]}
    assert run_ids[0] in exported_runs and not exported_runs & set(run_ids[1:])  # inherited run in, later ones out
    assert {event["run_id"] for event in bundle["events"]} == exported_runs


def test_fork_defaults_to_the_latest_turn_and_checks_the_turn(client: TestClient) -> None:
    origin = new_session(client, {}, "")
    for index in range(2):
        seed_run(client, {}, origin, message=f"q{index}", answer=f"a{index}", status="succeeded")
    whole = client.post(f"/api/v1/sessions/{origin}/fork").json()
    assert whole["forked_after_turn"] == 2 and whole["title"] == "untitled (fork after turn 2)"
    assert client.get(f"/api/v1/sessions/{whole['id']}/turns").json()["total"] == 2

    empty = client.post(f"/api/v1/sessions/{origin}/fork", json={"after_turn": 0, "title": "fresh start"}).json()
    assert (empty["title"], empty["forked_after_turn"]) == ("fresh start", 0)
    assert client.get(f"/api/v1/sessions/{empty['id']}/turns").json()["total"] == 0

    body = assert_error(client.post(f"/api/v1/sessions/{origin}/fork", json={"after_turn": 3}), 422, "invalid_turn")
    assert body["action"]
    assert_error(client.post(f"/api/v1/sessions/{origin}/fork", json={"after_turn": -1}), 422, "invalid_input")

    seed_run(client, {}, origin, message="still going", answer=None, status="running")
    assert_error(client.post(f"/api/v1/sessions/{origin}/fork"), 409, "turn_running")
    assert client.post(f"/api/v1/sessions/{origin}/fork", json={"after_turn": 2}).status_code == 201


def test_only_the_owner_can_fork(settings: Settings) -> None:
    configured = token_settings(settings)
    with TestClient(create_app(configured)) as client:
        alice, bob = bearer(configured, "alice"), bearer(configured, "bob")
        origin = new_session(client, alice)
        seed_run(client, alice, origin, status="succeeded")
        assert_error(client.post(f"/api/v1/sessions/{origin}/fork", headers=bob), 404, "not_found")
        fork = client.post(f"/api/v1/sessions/{origin}/fork", headers=alice)
        assert fork.status_code == 201
        assert client.get(f"/api/v1/sessions/{origin}", headers=alice).json()["forks"][0]["id"] == fork.json()["id"]
        assert client.get("/api/v1/sessions", headers=bob).json()["total"] == 0
