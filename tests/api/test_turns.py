"""Turns over HTTP: SSE streaming, idempotent replay, one active turn per session, durable cancel, resume."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient

from fleet_rlm.config import Settings
from fleet_rlm.testing import FakeLMServer, adapter_fields_rule, rlm_step
from tests.helpers import new_session, parse_sse, run_turn


def assert_gap_free(events: list[dict[str, Any]]) -> None:
    seqs = [event["seq"] for event in events]
    assert seqs == list(range(1, len(seqs) + 1)), seqs


def test_direct_turn_streams_to_the_end_and_commits(client: TestClient) -> None:
    session_id = new_session(client)
    run_id, events = run_turn(
        client, session_id, {"content": "What is six times seven?", "execution_mode": "direct"}, "k1"
    )
    assert_gap_free(events)
    types = [event["type"] for event in events]
    assert types[0] == "turn_started" and types[-1] == "turn_finished"
    assert "final" in types and "usage" in types
    final = next(event for event in events if event["type"] == "final")
    assert final["answer"] == "forty-two"
    run = client.get(f"/api/v1/runs/{run_id}").json()
    assert run["status"] == "succeeded"
    turns = client.get(f"/api/v1/sessions/{session_id}/turns").json()
    assert turns["items"][-1]["answer"] == "forty-two"
    assert turns["items"][-1]["run_id"] == run_id
    assert events[0]["turn_id"] == turns["items"][-1]["id"]
    stored = client.get(f"/api/v1/runs/{run_id}/events").json()
    assert [event["seq"] for event in stored["items"]] == [event["seq"] for event in events]
    assert stored["items"] == events


def test_same_key_replays_and_a_different_input_conflicts(client: TestClient, lm: FakeLMServer) -> None:
    session_id = new_session(client)
    body = {"content": "hello", "execution_mode": "direct"}
    first_run, first = run_turn(client, session_id, body, "same-key")
    calls = len(lm.requests)
    again_run, again = run_turn(client, session_id, body, "same-key")
    assert again_run == first_run and again == first
    assert len(lm.requests) == calls, "a replay must not call the model again"
    conflict = client.post(
        f"/api/v1/sessions/{session_id}/turns",
        json={"content": "something else", "execution_mode": "direct"},
        headers={"Idempotency-Key": "same-key"},
    )
    assert conflict.status_code == 409 and conflict.json()["error"]["code"] == "idempotency_conflict"


def test_idempotency_key_is_required_and_input_validated(client: TestClient) -> None:
    session_id = new_session(client)
    missing = client.post(f"/api/v1/sessions/{session_id}/turns", json={"content": "x"})
    assert missing.status_code == 400 and missing.json()["error"]["code"] == "idempotency_key_required"
    bad = client.post(
        f"/api/v1/sessions/{session_id}/turns",
        json={"content": "x", "repo_ref": "main"},
        headers={"Idempotency-Key": "k"},
    )
    assert bad.status_code == 422 and "repo_url" in bad.json()["error"]["message"]
    unknown = client.post(
        f"/api/v1/sessions/{session_id}/turns", json={"content": "x", "colour": "red"}, headers={"Idempotency-Key": "k"}
    )
    assert unknown.status_code == 422
    absent = client.post("/api/v1/sessions/nope/turns", json={"content": "x"}, headers={"Idempotency-Key": "k2"})
    assert absent.status_code == 404


@pytest.mark.parametrize("content", ["", "   ", "\n\t \n"])
def test_empty_or_whitespace_task_is_refused_before_a_run(client: TestClient, content: str) -> None:
    session_id = new_session(client)
    response = client.post(
        f"/api/v1/sessions/{session_id}/turns", json={"content": content}, headers={"Idempotency-Key": "blank"}
    )
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "empty_task" and error["action"]
    assert client.get(f"/api/v1/sessions/{session_id}/turns").json()["items"] == []


def _slow_rlm_rule() -> Any:
    """RLM action steps run a long cell; everything else is answered by field."""
    auto = adapter_fields_rule(answer="done")

    def rule(request: Any) -> Any:
        if "`code`" in request.system_text and "`reasoning`" in request.system_text:
            return rlm_step("wait a while", "import time\nfor _ in range(600):\n    time.sleep(0.05)")
        return auto(request)

    return rule


def test_cancel_stops_a_long_cell_and_a_second_turn_is_refused_meanwhile(client: TestClient, lm: FakeLMServer) -> None:
    lm.reset()
    lm.add_rule(_slow_rlm_rule())
    session_id = new_session(client)
    with client.stream(
        "POST",
        f"/api/v1/sessions/{session_id}/turns",
        json={"content": "loop", "execution_mode": "rlm"},
        headers={"Idempotency-Key": "slow"},
    ) as response:
        run_id = response.headers["X-Run-Id"]
        busy = client.post(
            f"/api/v1/sessions/{session_id}/turns",
            json={"content": "another", "execution_mode": "direct"},
            headers={"Idempotency-Key": "other"},
        )
        assert busy.status_code == 409
        assert busy.json()["error"]["code"] == "turn_already_running"
        assert run_id in busy.json()["error"]["message"]
        seen: list[dict[str, Any]] = []
        cancelled_at = None
        buffer = ""
        for chunk in response.iter_text():
            buffer += chunk
            events = parse_sse(buffer)
            if cancelled_at is None and any(event["type"] == "code" for event in events):
                time.sleep(0.3)
                cancel = client.put(f"/api/v1/runs/{run_id}/cancellation")
                assert cancel.status_code == 202 and cancel.json()["cancel_requested"] is True
                cancelled_at = time.monotonic()
            seen = events
        elapsed = time.monotonic() - (cancelled_at or time.monotonic())
    assert seen[-1]["type"] == "turn_cancelled"
    assert elapsed < 5, f"cancel took {elapsed:.1f}s"
    assert client.get(f"/api/v1/runs/{run_id}").json()["status"] == "cancelled"
    lm.reset()
    lm.add_rule(adapter_fields_rule(answer="after cancel"))
    _, events = run_turn(client, session_id, {"content": "still there?", "execution_mode": "direct"}, "after")
    assert events[-1]["type"] == "turn_finished"


def _start_together(client: TestClient, session_id: str, keys: list[str]) -> list[tuple[int, dict[str, Any]]]:
    """POST one turn per key from as many threads at once; (status, run id or error) each, streams closed."""
    barrier = threading.Barrier(len(keys))

    def start(key: str) -> tuple[int, dict[str, Any]]:
        barrier.wait()
        body = {"content": "loop", "execution_mode": "rlm"}
        url = f"/api/v1/sessions/{session_id}/turns"
        with client.stream("POST", url, json=body, headers={"Idempotency-Key": key}) as response:
            if response.status_code != 200:
                response.read()
                return response.status_code, response.json()["error"]
            return response.status_code, {"run_id": response.headers["X-Run-Id"]}

    with ThreadPoolExecutor(len(keys)) as pool:
        return list(pool.map(start, keys))


def _cancel_and_wait(client: TestClient, run_id: str) -> None:
    assert client.put(f"/api/v1/runs/{run_id}/cancellation").status_code == 202
    deadline = time.monotonic() + 30
    while client.get(f"/api/v1/runs/{run_id}").json()["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, "the cancelled run did not end"
        time.sleep(0.05)


def test_starts_racing_with_one_key_get_one_run_and_one_turn(client: TestClient, lm: FakeLMServer) -> None:
    lm.reset()
    lm.add_rule(_slow_rlm_rule())
    session_id = new_session(client)
    results = _start_together(client, session_id, ["racing-key"] * 6)
    assert {status for status, _ in results} == {200}, results
    run_ids = {answer["run_id"] for _, answer in results}
    assert len(run_ids) == 1, results
    turns = client.get(f"/api/v1/sessions/{session_id}/turns").json()["items"]
    assert [(turn["index"], turn["run_id"]) for turn in turns] == [(0, run_ids.pop())]
    _cancel_and_wait(client, turns[0]["run_id"])


def test_starts_racing_in_one_session_run_one_turn_and_refuse_the_rest(client: TestClient, lm: FakeLMServer) -> None:
    lm.reset()
    lm.add_rule(_slow_rlm_rule())
    session_id = new_session(client)
    results = _start_together(client, session_id, [f"key-{i}" for i in range(6)])
    started = [answer["run_id"] for status, answer in results if status == 200]
    refused = [answer for status, answer in results if status != 200]
    assert len(started) == 1, results
    assert {status for status, _ in results} == {200, 409}
    assert {error["code"] for error in refused} == {"turn_already_running"}
    turns = client.get(f"/api/v1/sessions/{session_id}/turns").json()["items"]
    assert [(turn["index"], turn["run_id"]) for turn in turns] == [(0, started[0])]  # refused starts left no turn
    _cancel_and_wait(client, started[0])
    lm.reset()
    lm.add_rule(adapter_fields_rule(answer="next"))
    run_turn(client, session_id, {"content": "after the race", "execution_mode": "direct"}, "after-race")
    turns = client.get(f"/api/v1/sessions/{session_id}/turns").json()["items"]
    assert [turn["index"] for turn in turns] == [0, 1]


def test_stream_resumes_after_any_seq(client: TestClient) -> None:
    session_id = new_session(client)
    run_id, events = run_turn(client, session_id, {"content": "resume me", "execution_mode": "direct"}, "r1")
    for after in (0, 1, len(events) // 2, len(events) - 1):
        with client.stream("GET", f"/api/v1/runs/{run_id}/stream", params={"after": after}) as response:
            replay = parse_sse("".join(response.iter_text()))
        assert replay == events[after:]
    with client.stream("GET", f"/api/v1/runs/{run_id}/stream", headers={"Last-Event-ID": "2"}) as response:
        assert parse_sse("".join(response.iter_text())) == events[2:]


def test_three_turns_share_history(client: TestClient, lm: FakeLMServer) -> None:
    session_id = new_session(client)
    for index in range(3):
        run_turn(client, session_id, {"content": f"message number {index}", "execution_mode": "direct"}, f"h{index}")
    last_prompt = lm.requests[-1].text
    assert "message number 0" in last_prompt and "message number 1" in last_prompt


def test_deleting_a_session_removes_its_context_documents(client: TestClient, settings: Settings) -> None:
    kept, deleted = new_session(client, "kept"), new_session(client, "deleted")
    for session_id in (kept, deleted):
        body = {"content": "Summarize.", "execution_mode": "direct", "context_text": f"notes of {session_id}"}
        assert run_turn(client, session_id, body, f"ctx-{session_id}")[1][-1]["type"] == "turn_finished"
    sessions_dir = settings.data_dir / "sessions"
    assert any((sessions_dir / deleted / "context").iterdir()), "the turn wrote no context document"

    assert client.delete(f"/api/v1/sessions/{deleted}").status_code == 204
    assert not (sessions_dir / deleted).exists()
    assert any((sessions_dir / kept / "context").iterdir())  # another session's documents are untouched
