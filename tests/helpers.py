"""Shared test helpers: SSE parsing, the app's settings on a fake LM, and starting/following a turn over HTTP."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.config import Settings
from fleet_rlm.testing import FakeLMServer


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The JSON `data:` payloads of an SSE body, in order."""
    events = []
    for block in text.split("\n\n"):
        data = [line[6:] for line in block.splitlines() if line.startswith("data: ")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events


def fake_lm_settings(settings: Settings, lm: FakeLMServer, **overrides: Any) -> Settings:
    """`settings` with every turn on the fake LM, no sandbox pool and a fast heartbeat."""
    update: dict[str, Any] = {
        "lm_model": lm.model,
        "lm_api_base": lm.base_url,
        "lm_api_key": SecretStr("fake"),
        "sandbox_pool_size": 0,
        "run_heartbeat_s": 0.5,
    }
    return settings.model_copy(update=update | overrides)


def new_session(client: TestClient, title: str = "test", headers: dict[str, str] | None = None) -> str:
    response = client.post("/api/v1/sessions", json={"title": title}, headers=headers)
    assert response.status_code in (200, 201), response.text
    return str(response.json()["id"])


def run_turn(
    client: TestClient, session_id: str, body: dict[str, Any], key: str, headers: dict[str, str] | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """POST the turn, follow it to its end; returns (run id, events)."""
    with client.stream(
        "POST",
        f"/api/v1/sessions/{session_id}/turns",
        json=body,
        headers={"Idempotency-Key": key, **(headers or {})},
    ) as response:
        assert response.status_code == 200, response.read()
        run_id = response.headers["X-Run-Id"]
        text = "".join(response.iter_text())
    return run_id, parse_sse(text)


def final_answer(events: list[dict[str, Any]]) -> str:
    assert events[-1]["type"] == "turn_finished", events[-3:]
    return str(next(event for event in events if event["type"] == "final")["answer"])
