"""Runs: status, event replay paging, the steps view and trace feedback; another user's run is 404."""

from __future__ import annotations

from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.store import Database
from fleet_rlm.store.repos import runs

from .isolation import assert_error, bearer, new_session, on_app, seed_run, token_settings

TRACE = [
    ("turn_started", {"mode": "rlm"}),
    ("reasoning", {"text": "look at the data", "iteration": 1}),
    ("code", {"code": "print(len(context))", "iteration": 1}),
    ("sub_lm_start", {"call_id": "s1", "model": "m", "prompt_preview": "summarize"}),
    ("output", {"stream": "stdout", "text": "42", "iteration": 1}),
    ("sub_lm_end", {"call_id": "s1", "ok": True}),
    ("tool_call", {"call_id": "t1", "name": "search", "args": {}}),
    ("tool_result", {"call_id": "t1", "ok": True}),
    ("reasoning", {"text": "done", "iteration": 2}),
    ("child_start", {"child_id": "c1", "child_depth": 1}),
    ("child_end", {"child_id": "c1", "ok": True}),
    ("tool_result", {"ok": True}),  # no call_id: stands alone
    ("final", {"answer": "42"}),
]


def test_get_run_and_replay_events_in_pages(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        sid = new_session(client, {})
        run_id = seed_run(client, {}, sid, event_types=[("status", {"text": f"step {i}"}) for i in range(5)])
        run = client.get(f"/api/v1/runs/{run_id}").json()
        assert (run["session_id"], run["status"], run["last_seq"]) == (sid, "queued", 5)

        seen: list[int] = []
        after: int | None = 0
        while after is not None:
            page = client.get(f"/api/v1/runs/{run_id}/events", params={"after": after, "limit": 2}).json()
            seen.extend(event["seq"] for event in page["items"])
            assert page["last_seq"] == 5
            after = page["next_after"]
        assert seen == [1, 2, 3, 4, 5]
        tail = client.get(f"/api/v1/runs/{run_id}/events", params={"after": 5}).json()
        assert tail == {"items": [], "next_after": None, "last_seq": 5}
        first = client.get(f"/api/v1/runs/{run_id}/events").json()["items"][0]
        assert first["type"] == "status" and first["text"] == "step 0" and first["run_id"] == run_id
        assert first["session_id"] == sid and first["seq"] == 1  # the same flat JSON a live client receives

        body = assert_error(client.get(f"/api/v1/runs/{run_id}/events", params={"limit": 1001}), 422, "invalid_input")
        assert "limit" in body["message"]
        assert_error(client.get(f"/api/v1/runs/{run_id}/events", params={"after": -1}), 422, "invalid_input")
        assert_error(client.get("/api/v1/runs/0123456789abcdef0123456789abcdef"), 404, "not_found")


def test_steps_group_events_by_iteration_call_and_child(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        run_id = seed_run(client, {}, new_session(client, {}), event_types=TRACE)
        steps = client.get(f"/api/v1/runs/{run_id}/steps").json()
        assert steps["truncated"] is False
        shape = [(step["kind"], step["key"], [e["seq"] for e in step["events"]]) for step in steps["items"]]
        assert shape == [
            ("event", None, [1]),
            ("iteration", "1", [2, 3, 5]),
            ("sub_lm", "s1", [4, 6]),
            ("tool", "t1", [7, 8]),
            ("iteration", "2", [9]),
            ("child", "c1", [10, 11]),
            ("event", None, [12]),
            ("event", None, [13]),
        ]
        iteration = steps["items"][1]
        assert iteration["types"] == ["reasoning", "code", "output"]
        assert (iteration["first_seq"], iteration["last_seq"]) == (2, 5)
        assert [step["index"] for step in steps["items"]] == list(range(8))


def test_feedback_is_stored_and_validated(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        run_id = seed_run(client, {}, new_session(client, {}))
        payload = {"run_id": run_id, "rating": "down", "comment": "wrong year", "expected_answer": "1999"}
        created = client.post("/api/v1/traces/feedback", json=payload)
        assert created.status_code == 201
        assert {k: created.json()[k] for k in payload} == payload
        assert_error(client.post("/api/v1/traces/feedback", json={**payload, "rating": "meh"}), 422, "invalid_input")
        assert_error(client.post("/api/v1/traces/feedback", json={"rating": "up"}), 422, "invalid_input")
        unknown = {**payload, "run_id": "0" * 32}
        assert_error(client.post("/api/v1/traces/feedback", json=unknown), 404, "not_found")


def test_another_users_run_is_404_everywhere(settings: Settings) -> None:
    secured = token_settings(settings)
    with TestClient(create_app(secured)) as client:
        alice, bob = bearer(secured, "alice"), bearer(secured, "bob")
        run_id = seed_run(client, alice, new_session(client, alice), event_types=TRACE[:2])
        for path in (f"/api/v1/runs/{run_id}", f"/api/v1/runs/{run_id}/events", f"/api/v1/runs/{run_id}/steps"):
            assert_error(client.get(path, headers=bob), 404, "not_found")
            assert client.get(path, headers=alice).status_code == 200
        feedback = {"run_id": run_id, "rating": "up"}
        assert_error(client.post("/api/v1/traces/feedback", json=feedback, headers=bob), 404, "not_found")
        assert client.post("/api/v1/traces/feedback", json=feedback, headers=alice).status_code == 201


def test_an_interrupted_run_is_final_for_every_client(settings: Settings) -> None:
    """interrupted is final: a follower ends at once (no terminal event needed); a cancel is refused."""
    with TestClient(create_app(settings)) as client:
        sid = new_session(client, {})
        run_id = seed_run(client, {}, sid, event_types=[("status", {"text": "working"})], status="running")

        async def interrupt(db: Database) -> None:
            async with db.transaction() as s:
                await runs.set_run_status(s, run_id=run_id, status="interrupted")

        on_app(client, interrupt)
        cancel = client.put(f"/api/v1/runs/{run_id}/cancellation")
        assert_error(cancel, 409, "run_finished")  # says so, instead of accepting a request that does nothing
        assert "interrupted" in cancel.json()["error"]["message"]
        with client.stream("GET", f"/api/v1/runs/{run_id}/stream") as response:
            text = "".join(response.iter_text())
        assert "event: status" in text and text.count("event: ") == 1  # replayed, then ended: nothing more comes
        run = client.get(f"/api/v1/runs/{run_id}").json()
        assert (run["status"], run["outcome"], run["cancel_requested_at"]) == ("interrupted", None, None)
