"""Feedback on runs is readable and editable: one rating per user and run, read back per run, turn, session and
user (paged, filtered by rating and mode), replaced, patched and deleted; another user's run is 404."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.store import Database
from fleet_rlm.store.models import Run

from .isolation import assert_error, bearer, new_session, on_app, seed_run, token_settings

API = "/api/v1/traces/feedback"


def set_mode(client: TestClient, run_id: str, mode: str) -> None:
    async def update(db: Database) -> None:
        async with db.transaction() as s:
            run = await s.get(Run, run_id)
            assert run is not None
            run.execution_mode = mode
            s.add(run)

    on_app(client, update)


def listed(client: TestClient, headers: dict[str, str], **query: Any) -> dict[str, Any]:
    response = client.get(API, params=query, headers=headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_rate_read_back_edit_and_delete(settings: Settings) -> None:
    secured = token_settings(settings)
    with TestClient(create_app(secured)) as client:
        alice = bearer(secured, "alice")
        sid = new_session(client, alice)
        other_sid = new_session(client, alice, title="other")
        run_id = seed_run(client, alice, sid, message="What is 6 x 7?", answer="41")
        second = seed_run(client, alice, sid, message="Capital of France?", answer="Paris")
        elsewhere = seed_run(client, alice, other_sid, message="2 + 2?", answer="4")
        set_mode(client, second, "direct")
        turn_id = client.get(f"/api/v1/runs/{run_id}", headers=alice).json()["turn_id"]

        body = {"run_id": run_id, "rating": "up", "comment": "nice"}
        assert client.post(API, json=body, headers=alice).status_code == 201
        # rating again replaces it (one per user and run): the last click is the opinion
        again = client.post(API, json={**body, "rating": "down", "expected_answer": "42"}, headers=alice)
        assert again.status_code == 201 and again.json()["comment"] == "nice"
        for other, rating in ((second, "up"), (elsewhere, "up")):
            assert client.put(f"{API}/{other}", json={"rating": rating}, headers=alice).status_code == 200

        one = client.get(f"{API}/{run_id}", headers=alice).json()
        assert (one["rating"], one["comment"], one["expected_answer"]) == ("down", "nice", "42")
        by_run = listed(client, alice, run_id=run_id)
        assert by_run["total"] == 1
        item = by_run["items"][0]
        assert (item["task"], item["answer"], item["session_id"], item["turn_id"]) == (
            "What is 6 x 7?",
            "41",
            sid,
            turn_id,
        )
        assert [i["run_id"] for i in listed(client, alice, turn_id=turn_id)["items"]] == [run_id]
        assert {i["run_id"] for i in listed(client, alice, session_id=sid)["items"]} == {run_id, second}
        everything = listed(client, alice)
        assert everything["total"] == 3 and everything["items"][0]["run_id"] == elsewhere  # latest rated first
        assert [i["run_id"] for i in listed(client, alice, rating="down")["items"]] == [run_id]
        assert [i["run_id"] for i in listed(client, alice, mode="direct")["items"]] == [second]
        paged = listed(client, alice, limit=2, offset=2)
        assert (paged["total"], len(paged["items"]), paged["offset"]) == (3, 1, 2)

        patched = client.patch(f"{API}/{run_id}", json={"rating": "up", "comment": None}, headers=alice)
        assert patched.status_code == 200, patched.text
        assert (patched.json()["rating"], patched.json()["comment"], patched.json()["expected_answer"]) == (
            "up",
            None,
            "42",
        )
        assert patched.json()["updated_at"] >= patched.json()["created_at"]
        assert client.get(f"{API}/{run_id}", headers=alice).json()["rating"] == "up"
        replaced = client.put(f"{API}/{run_id}", json={"rating": "down", "comment": "off by one"}, headers=alice)
        assert (replaced.json()["comment"], replaced.json()["expected_answer"]) == ("off by one", None)

        assert client.delete(f"{API}/{run_id}", headers=alice).status_code == 204
        assert_error(client.get(f"{API}/{run_id}", headers=alice), 404, "feedback_not_found")
        assert listed(client, alice, run_id=run_id)["total"] == 0
        assert_error(client.delete(f"{API}/{run_id}", headers=alice), 404, "feedback_not_found")
        assert_error(client.patch(f"{API}/{run_id}", json={"rating": "up"}, headers=alice), 404, "feedback_not_found")
        assert_error(client.put(f"{API}/{run_id}", json={"rating": "meh"}, headers=alice), 422, "invalid_input")
        assert_error(client.get(API, params={"rating": "meh"}, headers=alice), 422, "invalid_input")


def test_another_user_cannot_read_or_edit_feedback(settings: Settings) -> None:
    secured = token_settings(settings)
    with TestClient(create_app(secured)) as client:
        alice, bob = bearer(secured, "alice"), bearer(secured, "bob")
        sid = new_session(client, alice)
        run_id = seed_run(client, alice, sid)
        assert client.put(f"{API}/{run_id}", json={"rating": "up", "comment": "mine"}, headers=alice).status_code == 200

        assert_error(client.get(f"{API}/{run_id}", headers=bob), 404, "not_found")
        assert_error(client.put(f"{API}/{run_id}", json={"rating": "down"}, headers=bob), 404, "not_found")
        assert_error(client.patch(f"{API}/{run_id}", json={"rating": "down"}, headers=bob), 404, "not_found")
        assert_error(client.delete(f"{API}/{run_id}", headers=bob), 404, "not_found")
        assert listed(client, bob)["total"] == 0
        assert listed(client, bob, run_id=run_id)["total"] == 0
        assert listed(client, bob, session_id=sid)["total"] == 0
        mine = client.get(f"{API}/{run_id}", headers=alice).json()
        assert (mine["rating"], mine["comment"]) == ("up", "mine")
