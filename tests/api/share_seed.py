"""A session whose run has every tree shape (iterations, a sub-LM batch, a nested child, a tool call) and
hostile text everywhere: markup in the task and outputs, the server's API key, an auth header, host paths."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from fleet_rlm.config import Settings
from fleet_rlm.store import Database
from fleet_rlm.store.repos import events as events_repo

from .isolation import new_session, on_app, seed_artifact, seed_run

API_KEY = "sk-test-share-0123456789abcdef"
AUTH_HEADER = "Authorization: Bearer abcDEF0123456789xyz"
HOSTILE = '<script>document.title="pwned";window.pwned=1</script><img src=x onerror="window.pwned=2">'
ANSWER = "The answer is 42 </pre><b>not bold</b>"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def events(data_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    child = {"depth": 1, "actor": "child:c1", "parent_id": "c1"}
    return [
        ("turn_started", {"requested_mode": "rlm", "input_preview": HOSTILE}),
        ("route_decision", {"mode": "rlm", "reason": "long context"}),
        ("reasoning", {"text": f"Look at {data_dir}/workspaces first. {HOSTILE}", "iteration": 1}),
        ("code", {"code": f"print(len(context))  # {HOSTILE}", "iteration": 1}),
        ("output", {"stream": "stdout", "text": f"42 {API_KEY} {AUTH_HEADER}", "iteration": 1}),
        ("sub_lm_start", {"call_id": "a", "model": "fake", "batch_id": "b1", "batch_index": 0, "batch_size": 2}),
        ("sub_lm_start", {"call_id": "b", "model": "fake", "batch_id": "b1", "batch_index": 1, "batch_size": 2}),
        ("sub_lm_end", {"call_id": "a", "ok": True, "latency_ms": 120, "response_preview": "first half"}),
        ("sub_lm_end", {"call_id": "b", "ok": False, "latency_ms": 80, "error": "rate limited"}),
        ("child_start", {"child_id": "c1", "task_preview": "summarise part one", "child_depth": 1}),
        ("code", {"code": "print('child code')", "iteration": 1, **child}),
        ("output", {"stream": "stdout", "text": "child output line", "iteration": 1, **child}),
        ("child_end", {"child_id": "c1", "ok": True, "answer_preview": "part one is short"}),
        ("tool_call", {"call_id": "t1", "name": "search_docs", "args": {"q": HOSTILE}}),
        ("tool_result", {"call_id": "t1", "name": "search_docs", "ok": True, "result_preview": "found it"}),
        ("final", {"answer": ANSWER}),
        ("turn_finished", {"mode": "rlm", "duration_ms": 900}),
    ]


def seed_shared_session(client: TestClient, settings: Settings) -> tuple[str, str]:
    """(session id, run id): one turn with the hostile trace, a text and an image artifact."""
    sid = new_session(client, {}, f"Share me {HOSTILE}")
    run_id = seed_run(client, {}, sid, message=HOSTILE, answer=ANSWER, status="succeeded")

    async def append(db: Database) -> None:
        async with db.transaction() as s:
            for type_, payload in events(settings.data_dir):
                envelope = {k: payload.pop(k) for k in ("depth", "actor", "parent_id") if k in payload}
                await events_repo.append_event(s, run_id=run_id, type=type_, payload=payload, **envelope)

    on_app(client, append)
    root = settings.workspaces_dir / client.get("/api/v1/auth/me").json()["workspace_id"] / "artifacts"
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.md").write_text(f"# Notes\n{HOSTILE}\nkey={API_KEY}\n", encoding="utf-8")
    (root / "dot.png").write_bytes(PNG)
    (root / "fake.png").write_bytes(b"<svg onload=alert(1)>")
    seed_artifact(client, {}, sid, run_id, "artifacts/notes.md", name="notes.md")
    for name in ("dot.png", "fake.png"):
        seed_artifact(client, {}, sid, run_id, f"artifacts/{name}", name=name, media_type="image/png")
    return sid, run_id
