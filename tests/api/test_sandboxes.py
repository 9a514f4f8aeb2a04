"""Live sandboxes over HTTP: an rlm turn leaves its session's REPL warm; the owner lists, inspects and ends it
(or deletes the session); another user sees nothing of it. With turns in API threads and in a turn worker."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.config import Settings
from fleet_rlm.testing import FakeLMServer, adapter_fields_rule, sub_lm_rule
from tests.api.isolation import assert_error, bearer, new_session, token_settings
from tests.helpers import final_answer, run_turn


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(rules=[sub_lm_rule("sub"), adapter_fields_rule(answer="computed")]) as server:
        yield server


@pytest.fixture(params=[0, 1], ids=["threads", "turn-processes"])
def app_settings(settings: Settings, lm: FakeLMServer, request: pytest.FixtureRequest) -> Settings:
    """Turns in API threads, and in a turn worker process: the worker's pool answers over its pipe."""
    return token_settings(
        settings,
        lm_model=lm.model,
        lm_api_base=lm.base_url,
        lm_api_key=SecretStr("fake"),
        sandbox_pool_size=0,
        run_heartbeat_s=0.5,
        turn_processes=request.param,
    )


def test_list_inspect_and_end_a_sessions_sandbox(client: TestClient, app_settings: Settings) -> None:
    alice, bob = bearer(app_settings, "alice"), bearer(app_settings, "bob")
    assert client.get("/api/v1/sandboxes", headers=alice).json()["items"] == []
    session = new_session(client, alice)
    _, events = run_turn(client, session, {"content": "compute", "execution_mode": "rlm"}, "r1", alice)
    assert final_answer(events) == "computed"

    items = client.get("/api/v1/sandboxes", headers=alice).json()["items"]
    assert len(items) == 1
    sandbox = items[0]
    assert sandbox["id"] == session and sandbox["session_id"] == session
    assert sandbox["alive"] is True and sandbox["busy"] is False and sandbox["backend"] == "local"
    assert sandbox["started_at"] <= sandbox["last_used_at"]
    assert client.get(f"/api/v1/sandboxes/{session}", headers=alice).json() == sandbox
    status = client.get("/api/v1/runtime/status", headers=alice).json()
    assert status["sandbox"]["live_sandboxes"] == 1

    assert client.get("/api/v1/sandboxes", headers=bob).json()["items"] == []
    assert_error(client.get(f"/api/v1/sandboxes/{session}", headers=bob), 404, "sandbox_not_found")
    assert_error(client.delete(f"/api/v1/sandboxes/{session}", headers=bob), 404, "sandbox_not_found")

    assert client.delete(f"/api/v1/sandboxes/{session}", headers=alice).status_code == 204
    assert client.get("/api/v1/sandboxes", headers=alice).json()["items"] == []
    assert_error(client.get(f"/api/v1/sandboxes/{session}", headers=alice), 404, "sandbox_not_found")

    _, again = run_turn(client, session, {"content": "compute again", "execution_mode": "rlm"}, "r2", alice)
    assert final_answer(again) == "computed", "the next turn starts a fresh sandbox"
    assert [item["id"] for item in client.get("/api/v1/sandboxes", headers=alice).json()["items"]] == [session]

    assert client.delete(f"/api/v1/sessions/{session}", headers=alice).status_code == 204  # ends its sandbox too
    assert client.get("/api/v1/sandboxes", headers=alice).json()["items"] == []


class PrepareLog:
    """The app's runtime, noting each `prepare` (session, workspace) before passing it on."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[str, str]] = []

    def prepare(self, session_id: str, workspace_id: str) -> None:
        self.calls.append((session_id, workspace_id))
        self.inner.prepare(session_id, workspace_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_an_rlm_turn_prepares_its_sessions_sandbox_and_a_direct_turn_starts_none(
    client: TestClient, app_settings: Settings
) -> None:
    alice = bearer(app_settings, "alice")
    turns = client.app.state.turns  # type: ignore[attr-defined]
    log = turns.runtime = PrepareLog(turns.runtime)
    chat = new_session(client, alice)
    _, events = run_turn(client, chat, {"content": "hello", "execution_mode": "direct"}, "d1", alice)
    assert final_answer(events) == "computed"
    assert log.calls == [] and client.get("/api/v1/sandboxes", headers=alice).json()["items"] == []

    session = new_session(client, alice)
    _, events = run_turn(client, session, {"content": "compute", "execution_mode": "rlm"}, "r1", alice)
    assert final_answer(events) == "computed"
    items = client.get("/api/v1/sandboxes", headers=alice).json()["items"]
    assert [item["session_id"] for item in items] == [session]  # the prepared sandbox ran the turn: one, not two
    assert log.calls == [(session, items[0]["workspace_id"])]
