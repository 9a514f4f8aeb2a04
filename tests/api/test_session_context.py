"""GET /sessions/{id}/context: the documents a session's turns loaded (source, name, size, turn), a fork's
inherited turns' context included, another user's session a 404."""

from __future__ import annotations

from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from tests.helpers import run_turn

from .isolation import assert_error, bearer, new_session, token_settings

NOTES = "The secret number is 42.\n" * 10


def test_context_lists_each_loaded_source_with_its_size_and_turn(client: TestClient) -> None:
    sid = new_session(client, {}, "context")
    made = client.post("/api/v1/attachments", json={"text": NOTES, "name": "notes.txt", "session_id": sid})
    assert made.status_code == 201, made.text
    body = {"content": "read my notes", "execution_mode": "direct", "attachment_ids": [made.json()["id"]]}
    first_run, _ = run_turn(client, sid, body, "ctx-1")
    run_turn(client, sid, {"content": "and this", "execution_mode": "direct", "context_text": "pasted words"}, "ctx-2")

    response = client.get(f"/api/v1/sessions/{sid}/context")
    assert response.status_code == 200, response.text
    items = response.json()["items"]
    by_name = {(item["turn"], item["name"]): item for item in items}
    notes = next(item for (turn, name), item in by_name.items() if turn == 1 and name == "notes.txt")
    assert (notes["run_id"], notes["chars"], notes["truncated"]) == (first_run, len(NOTES), False)
    assert notes["source"] in {"attachment", "file"}
    pasted = [item for item in items if item["turn"] == 2 and item["source"] == "text"]
    assert [p["chars"] for p in pasted] == [len("pasted words")]
    assert [item["turn"] for item in items] == sorted(item["turn"] for item in items)

    fork = client.post(f"/api/v1/sessions/{sid}/fork", json={"after_turn": 1}).json()
    inherited = client.get(f"/api/v1/sessions/{fork['id']}/context").json()["items"]
    assert {(item["turn"], item["name"]) for item in inherited} == {
        (item["turn"], item["name"]) for item in items if item["turn"] == 1
    }


def test_a_new_session_has_no_context_and_another_users_session_is_not_found(settings: Settings) -> None:
    secured = token_settings(settings)
    with TestClient(create_app(secured)) as client:
        alice, bob = bearer(secured, "alice"), bearer(secured, "bob")
        sid = new_session(client, alice, "alice's")
        assert client.get(f"/api/v1/sessions/{sid}/context", headers=alice).json() == {"items": []}
        assert_error(client.get(f"/api/v1/sessions/{sid}/context", headers=bob), 404, "not_found")
        assert_error(client.get("/api/v1/sessions/nope/context", headers=alice), 404, "not_found")
