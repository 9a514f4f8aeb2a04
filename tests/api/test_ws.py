"""Both WebSockets: strict frames that never close the socket, turns with ack + events, gap-free resume, tickets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from starlette.websockets import WebSocketDisconnect

from fleet_rlm.api.app import create_app
from fleet_rlm.api.auth import mint_token
from fleet_rlm.config import Settings
from fleet_rlm.testing import FakeLMServer, adapter_fields_rule, rlm_step, sub_lm_rule
from tests.helpers import new_session


def _stepping_rule() -> Any:
    """RLM action steps: three printing iterations, then SUBMIT; other programs answered by field."""
    auto = adapter_fields_rule(answer="stepped")
    state = {"steps": 0}

    def rule(request: Any) -> Any:
        if "`code`" in request.system_text and "`reasoning`" in request.system_text:
            state["steps"] += 1
            if state["steps"] % 4 == 0:
                return rlm_step("done", "SUBMIT(answer='stepped')")
            return rlm_step(
                f"step {state['steps']}", f"import time\ntime.sleep(0.2)\nprint('iteration {state['steps']}')"
            )
        return auto(request)

    return rule


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(rules=[sub_lm_rule("sub"), _stepping_rule()]) as server:
        yield server


def _configure(settings: Settings, lm: FakeLMServer, **extra: Any) -> Settings:
    return settings.model_copy(
        update={
            "lm_model": lm.model,
            "lm_api_base": lm.base_url,
            "lm_api_key": SecretStr("fake"),
            "sandbox_pool_size": 0,
            **extra,
        }
    )


@pytest.fixture
def app_settings(settings: Settings, lm: FakeLMServer) -> Settings:
    return _configure(settings, lm)


def test_bad_frames_get_error_frames_and_the_socket_stays_usable(client: TestClient) -> None:
    session_id = new_session(client)
    bad_frames = [
        ("not json at all", "invalid_json"),
        ("[1, 2]", "invalid_frame"),
        ('{"type": "teleport"}', "unknown_frame_type"),
        ('{"type": "message", "session_id": "' + session_id + '", "content": 5}', "invalid_frame"),
        ('{"type": "message", "session_id": "' + session_id + '", "content": "x", "repo_ref": "v1"}', "invalid_frame"),
        ('{"type": "message", "session_id": "' + session_id + '", "content": "x", "colour": 1}', "invalid_frame"),
        ('{"type": "cancel"}', "invalid_frame"),
        ('{"type": "command", "command": "fly"}', "unknown_command"),
        ('{"type": "message", "session_id": "missing", "content": "x"}', "not_found"),
        ('{"type": "message", "session_id": "' + session_id + '", "content": "   "}', "empty_task"),
        ("x" * (3 * 1024 * 1024), "frame_too_large"),
    ]
    with client.websocket_connect("/api/v1/ws/execution") as ws:
        for text, code in bad_frames:
            ws.send_text(text)
            reply = ws.receive_json()
            assert reply["type"] == "error" and reply["code"] == code, (text[:60], reply)
        ws.send_json({"type": "command", "command": "ping"})
        assert ws.receive_json() == {"type": "result", "command": "ping", "data": {"pong": True}}


def test_message_frame_runs_a_turn(client: TestClient) -> None:
    session_id = new_session(client)
    with client.websocket_connect("/api/v1/ws/execution") as ws:
        ws.send_json({"type": "message", "session_id": session_id, "content": "hi", "execution_mode": "direct"})
        ack = ws.receive_json()
        assert ack["type"] == "ack" and ack["run_id"]
        events = []
        while not events or events[-1]["type"] not in ("turn_finished", "turn_failed"):
            frame = ws.receive_json()
            assert frame["type"] == "event"
            assert frame["data"]["run_id"] == ack["run_id"]
            events.append(frame["data"])
    assert events[-1]["type"] == "turn_finished"
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))


def test_reconnect_with_after_misses_nothing_and_repeats_nothing(client: TestClient) -> None:
    session_id = new_session(client)
    with client.websocket_connect("/api/v1/ws/execution") as ws:
        ws.send_json({"type": "message", "session_id": session_id, "content": "steps", "execution_mode": "rlm"})
        run_id = ws.receive_json()["run_id"]
    first: list[dict[str, Any]] = []
    with client.websocket_connect(f"/api/v1/ws/execution/events?run_id={run_id}&after=0") as events_ws:
        while len(first) < 4:
            first.append(events_ws.receive_json()["data"])
    last = first[-1]["seq"]
    rest: list[dict[str, Any]] = []
    with client.websocket_connect(f"/api/v1/ws/execution/events?run_id={run_id}&after={last}") as events_ws:
        while True:
            frame = events_ws.receive_json()
            if frame["type"] == "end":
                break
            rest.append(frame["data"])
    seqs = [event["seq"] for event in first + rest]
    assert seqs == list(range(1, len(seqs) + 1))
    assert rest[-1]["type"] == "turn_finished"
    assert any(event["type"] == "output" for event in first + rest)


def test_events_socket_follows_a_session(client: TestClient) -> None:
    session_id = new_session(client)
    with client.websocket_connect(f"/api/v1/ws/execution/events?session_id={session_id}") as events_ws:
        response = client.post(
            f"/api/v1/sessions/{session_id}/turns",
            json={"content": "hello", "execution_mode": "direct"},
            headers={"Idempotency-Key": "follow"},
        )
        assert response.status_code == 200
        seen = []
        while not seen or seen[-1]["type"] != "turn_finished":
            seen.append(events_ws.receive_json()["data"])
    assert seen[0]["type"] == "turn_started"


def test_events_socket_rejects_bad_queries_and_unknown_runs(client: TestClient) -> None:
    with client.websocket_connect("/api/v1/ws/execution/events?after=x") as ws:
        assert ws.receive_json()["code"] == "invalid_query"
    with client.websocket_connect("/api/v1/ws/execution/events?run_id=nope") as ws:
        assert ws.receive_json()["code"] == "not_found"


def test_token_mode_needs_a_single_use_ticket(settings: Settings, lm: FakeLMServer) -> None:
    secret = SecretStr("a-test-signing-secret-that-is-long-enough")
    configured = _configure(settings, lm, auth_mode="token", jwt_secret=secret)
    with TestClient(create_app(configured)) as client:
        with client.websocket_connect("/api/v1/ws/execution") as ws:
            assert ws.receive_json()["code"] == "unauthorized"
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert closed.value.code == 4401
        headers = {"Authorization": f"Bearer {mint_token(configured, 'alice')}"}
        ticket = client.post("/api/v1/auth/ws-ticket", headers=headers).json()["ticket"]
        with client.websocket_connect(f"/api/v1/ws/execution?ticket={ticket}") as ws:
            ws.send_json({"type": "command", "command": "ping"})
            assert ws.receive_json()["type"] == "result"
        with client.websocket_connect(f"/api/v1/ws/execution?ticket={ticket}") as ws:
            assert ws.receive_json()["code"] == "unauthorized"
        bob = {"Authorization": f"Bearer {mint_token(configured, 'bob')}"}
        alice_session = client.post("/api/v1/sessions", json={"title": "a"}, headers=headers).json()["id"]
        bob_ticket = client.post("/api/v1/auth/ws-ticket", headers=bob).json()["ticket"]
        with client.websocket_connect(
            f"/api/v1/ws/execution/events?session_id={alice_session}&ticket={bob_ticket}"
        ) as ws:
            assert ws.receive_json()["code"] == "not_found"


def test_deep_binary_and_huge_frames_get_error_frames_and_the_socket_stays_open(client: TestClient) -> None:
    deep_array = "[" * 100_000 + "]" * 100_000
    deep_args = '{"type": "command", "command": "ping", "args": ' + '{"a": ' * 60_000 + "1" + "}" * 60_001
    unbalanced = '{"type": "command", "args": ' + "[" * 80_000
    with client.websocket_connect("/api/v1/ws/execution") as ws:
        for text in (deep_array, deep_args, unbalanced):
            ws.send_text(text)
            reply = ws.receive_json()
            assert (reply["type"], reply["code"]) == ("error", "frame_too_deep"), reply
        ws.send_bytes(b'{"type": "command", "command": "ping"}')
        assert ws.receive_json()["code"] == "invalid_frame"
        nested_ok = {"type": "command", "command": "ping", "args": {"a": [[[{"b": "[[[[["}]]]}}
        ws.send_json(nested_ok)
        assert ws.receive_json() == {"type": "result", "command": "ping", "data": {"pong": True}}


@pytest.mark.parametrize("mode", ["none", "token"])
def test_a_foreign_origin_is_refused_in_every_auth_mode(settings: Settings, lm: FakeLMServer, mode: str) -> None:
    configured = _configure(settings, lm, auth_mode=mode, jwt_secret=SecretStr("x" * 40))
    with TestClient(create_app(configured)) as client:
        with client.websocket_connect("/api/v1/ws/execution", headers={"Origin": "http://evil.example"}) as ws:
            assert ws.receive_json()["code"] == "origin_not_allowed"
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert (closed.value.code, closed.value.reason) == (4403, "origin_not_allowed")
        auth = {"Authorization": f"Bearer {mint_token(configured, 'alice')}"} if mode == "token" else {}
        refused = client.post("/api/v1/sessions", json={}, headers={**auth, "Origin": "null"})
        assert (refused.status_code, refused.json()["error"]["code"]) == (403, "origin_not_allowed")
        assert client.post("/api/v1/sessions", json={}, headers=auth).status_code == 201
