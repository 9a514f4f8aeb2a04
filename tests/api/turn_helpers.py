"""Start a turn over HTTP as a given user and collect its SSE events (shared by the runtime/skills/sandbox tests)."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient


def parse_sse(text: str) -> list[dict[str, Any]]:
    events = []
    for block in text.split("\n\n"):
        data = [line[6:] for line in block.splitlines() if line.startswith("data: ")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events


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
