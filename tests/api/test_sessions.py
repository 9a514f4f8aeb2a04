"""Sessions: CRUD, search and paging, committed turns, active run state, export; another user's session is 404."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.store.repos import runs

from .isolation import assert_error, bearer, new_session, on_app, seed_artifact, seed_run, token_settings


def test_session_crud_search_and_paging(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        created = client.post("/api/v1/sessions", json={"title": "Quarterly report", "settings": {"mode": "rlm"}})
        assert created.status_code == 201
        session = created.json()
        me = client.get("/api/v1/auth/me").json()
        assert session["workspace_id"] == me["workspace_id"] and session["settings"] == {"mode": "rlm"}
        for title in ("alpha notes", "beta notes", "gamma"):
            new_session(client, {}, title)

        everything = client.get("/api/v1/sessions").json()
        assert everything["total"] == 4 and everything["items"][0]["title"] == "gamma"  # most recent first
        found = client.get("/api/v1/sessions", params={"q": "NOTES"}).json()
        assert {item["title"] for item in found["items"]} == {"alpha notes", "beta notes"}
        assert client.get("/api/v1/sessions", params={"q": "100%_"}).json()["total"] == 0
        page = client.get("/api/v1/sessions", params={"limit": 2, "offset": 2}).json()
        assert (len(page["items"]), page["total"], page["limit"], page["offset"]) == (2, 4, 2, 2)

        sid = session["id"]
        assert client.get(f"/api/v1/sessions/{sid}").json()["title"] == "Quarterly report"
        patched = client.patch(f"/api/v1/sessions/{sid}", json={"title": "Q3", "summary": "numbers"}).json()
        assert (patched["title"], patched["summary"], patched["settings"]) == ("Q3", "numbers", {"mode": "rlm"})
        assert client.delete(f"/api/v1/sessions/{sid}").status_code == 204
        assert_error(client.get(f"/api/v1/sessions/{sid}"), 404, "not_found")
        assert_error(client.delete(f"/api/v1/sessions/{sid}"), 404, "not_found")


def test_session_bad_input_is_422(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        sid = new_session(client, {})
        assert_error(client.get("/api/v1/sessions", params={"limit": 0}), 422, "invalid_input")
        assert_error(client.get("/api/v1/sessions", params={"limit": 201}), 422, "invalid_input")
        assert_error(client.get("/api/v1/sessions", params={"offset": -1}), 422, "invalid_input")
        assert_error(client.post("/api/v1/sessions", json={"title": "x" * 501}), 422, "invalid_input")
        assert_error(client.post("/api/v1/sessions", json={"titel": "typo"}), 422, "invalid_input")
        assert_error(client.patch(f"/api/v1/sessions/{sid}", json={"settings": "no"}), 422, "invalid_input")
        assert_error(
            client.post("/api/v1/sessions", content=b"{not json", headers={"content-type": "application/json"}),
            422,
            "invalid_input",
        )


def test_request_body_limit_is_413_with_an_action(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        huge = b'{"title": "' + b"x" * (9 * 1024 * 1024) + b'"}'
        response = client.post("/api/v1/sessions", content=huge, headers={"content-type": "application/json"})
        body = assert_error(response, 413, "payload_too_large")
        assert body["action"]


def test_turns_are_paged_in_order(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        sid = new_session(client, {})
        for i in range(3):
            seed_run(client, {}, sid, message=f"question {i}", answer=f"answer {i}")
        first = client.get(f"/api/v1/sessions/{sid}/turns", params={"limit": 2}).json()
        assert first["total"] == 3 and [t["index"] for t in first["items"]] == [0, 1]
        assert first["items"][0]["user_message"] == "question 0" and first["items"][0]["run_id"]
        rest = client.get(f"/api/v1/sessions/{sid}/turns", params={"limit": 2, "offset": 2}).json()
        assert [t["answer"] for t in rest["items"]] == ["answer 2"]


def test_state_lists_sessions_with_queued_or_running_runs(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        busy, idle = new_session(client, {}, "busy"), new_session(client, {}, "idle")
        seed_run(client, {}, busy)
        running = seed_run(client, {}, busy, status="running")
        finished = seed_run(client, {}, idle, status="running")

        async def finish(db: Any) -> None:
            async with db.transaction() as s:
                await runs.set_run_status(s, run_id=finished, status="succeeded")

        on_app(client, finish)
        state = client.get("/api/v1/sessions/state").json()["items"]
        assert [(item["session_id"], item["active_run"]["id"]) for item in state] == [(busy, running)]
        assert state[0]["active_run"]["status"] == "running" and state[0]["title"] == "busy"


def test_export_bundle_has_everything(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        sid = new_session(client, {}, "exported")
        events = [("turn_started", {"mode": "rlm"}), ("final", {"answer": "42"})]
        run_id = seed_run(client, {}, sid, event_types=events, message="q", answer="42")
        seed_artifact(client, {}, sid, run_id, "artifacts/out.txt", name="out.txt")
        response = client.get(f"/api/v1/sessions/{sid}/export")
        assert response.status_code == 200
        assert response.headers["content-disposition"] == f'attachment; filename="fleet-session-{sid}.json"'
        bundle = response.json()
        assert bundle["format"] == "fleet-rlm.session-export/1"
        assert bundle["session"]["title"] == "exported"
        assert [(t["user_message"], t["answer"]) for t in bundle["turns"]] == [("q", "42")]
        assert [r["id"] for r in bundle["runs"]] == [run_id]
        assert [(e["seq"], e["type"], e["run_id"]) for e in bundle["events"]] == [
            (1, "turn_started", run_id),
            (2, "final", run_id),
        ]
        assert bundle["events"][1]["payload"] == {"answer": "42"}
        assert [a["name"] for a in bundle["artifacts"]] == ["out.txt"]


def test_another_users_session_is_404_everywhere(settings: Settings) -> None:
    secured = token_settings(settings)
    with TestClient(create_app(secured)) as client:
        alice, bob = bearer(secured, "alice"), bearer(secured, "bob")
        sid = new_session(client, alice, "private")
        seed_run(client, alice, sid)
        for method, path, kwargs in (
            ("GET", f"/api/v1/sessions/{sid}", {}),
            ("PATCH", f"/api/v1/sessions/{sid}", {"json": {"title": "mine now"}}),
            ("DELETE", f"/api/v1/sessions/{sid}", {}),
            ("GET", f"/api/v1/sessions/{sid}/turns", {}),
            ("GET", f"/api/v1/sessions/{sid}/export", {}),
        ):
            assert_error(client.request(method, path, headers=bob, **kwargs), 404, "not_found")
        assert client.get("/api/v1/sessions", headers=bob).json()["total"] == 0
        assert client.get("/api/v1/sessions/state", headers=bob).json()["items"] == []
        assert client.get("/api/v1/sessions/state", headers=alice).json()["items"][0]["session_id"] == sid
        assert client.get(f"/api/v1/sessions/{sid}", headers=alice).json()["title"] == "private"
        assert_error(client.get("/api/v1/sessions"), 401, "unauthorized")
