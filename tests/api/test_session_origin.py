"""Generated sessions (one per bench task) are tagged `origin: bench` and left out of the default list (a filter
shows them); a turn whose URL or repository the server would refuse is refused before a run exists."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from .isolation import assert_error, new_session


def test_generated_sessions_are_hidden_unless_asked_for(client: TestClient) -> None:
    mine = new_session(client, {}, "my question")
    bench = client.post("/api/v1/sessions", json={"title": "bench: needle", "origin": "bench"})
    assert bench.status_code == 201 and bench.json()["origin"] == "bench"
    assert client.get(f"/api/v1/sessions/{mine}").json()["origin"] == "user"

    default = client.get("/api/v1/sessions").json()
    assert [item["id"] for item in default["items"]] == [mine] and default["total"] == 1
    everything = client.get("/api/v1/sessions", params={"include": "generated"}).json()
    assert {item["id"] for item in everything["items"]} == {mine, bench.json()["id"]} and everything["total"] == 2
    only_bench = client.get("/api/v1/sessions", params={"origin": "bench"}).json()
    assert [item["id"] for item in only_bench["items"]] == [bench.json()["id"]]
    assert client.get(f"/api/v1/sessions/{bench.json()['id']}").status_code == 200  # still readable by id

    assert_error(client.post("/api/v1/sessions", json={"origin": "robot"}), 422, "invalid_input")
    assert_error(client.get("/api/v1/sessions", params={"include": "everything"}), 422, "invalid_input")


@pytest.mark.parametrize(
    ("field", "target", "code"),
    [
        ("urls", ["http://127.0.0.1:9/private"], "context_url_blocked"),
        ("urls", ["ftp://example.com/x"], "context_url_blocked"),
        ("repo_url", "file:///etc", "context_repo_blocked"),
    ],
)
def test_a_blocked_target_is_refused_before_a_run(client: TestClient, field: str, target: object, code: str) -> None:
    session_id = new_session(client, {})
    response = client.post(
        f"/api/v1/sessions/{session_id}/turns",
        json={"content": "read it", field: target},
        headers={"Idempotency-Key": f"blocked-{field}"},
    )
    error = assert_error(response, 403, code)
    assert error["action"]
    assert client.get(f"/api/v1/sessions/{session_id}/turns").json()["items"] == []
