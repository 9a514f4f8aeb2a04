"""Shared machinery of the security and reliability suites: one real server per module, scripted model cells.

`CellScript` is a fake-LM rule: a turn whose message carries a marker from `CellScript.register` gets the
registered cells as the model's RLM action steps (one per iteration), then `SUBMIT(answer='done')`. So every
hostile cell travels the real path: HTTP -> turn service -> runtime -> dspy.RLM -> sandbox -> events -> SSE.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from fleet_rlm.config import Settings
from fleet_rlm.testing import adapter_fields_rule, rlm_step
from tests.conftest import SUITE_ON_POSTGRES, drop_postgres_database, make_postgres_database
from tests.helpers import parse_sse

TERMINAL = ("turn_finished", "turn_failed", "turn_cancelled", "turn_interrupted")
# A fake provider key planted in the server's environment and used as the LM api key: it must never leak.
CANARY_SECRET = f"sk-canary-{uuid.uuid4().hex}"
_MARKER = re.compile(r"case-[a-z0-9_]+-[0-9a-f]{8}")


def is_action_step(request: Any) -> bool:
    return "`code`" in request.system_text and "`reasoning`" in request.system_text


class CellScript:
    """Fake-LM rule serving registered cells to the turn whose message carries their marker."""

    def __init__(self, answer: str = "done") -> None:
        self._cells: dict[str, list[str]] = {}
        self._served: dict[str, int] = {}
        self._lock = threading.Lock()
        self._auto = adapter_fields_rule(answer=answer)

    def register(self, name: str, *cells: str) -> str:
        """A message that makes the model run `cells` in order, then submit."""
        marker = f"case-{name}-{uuid.uuid4().hex[:8]}"
        with self._lock:
            self._cells[marker] = list(cells)
            self._served[marker] = 0
        return f"{marker} please run the next step"

    def __call__(self, request: Any) -> Any:
        if not is_action_step(request):
            return self._auto(request)
        with self._lock:
            # the newest registered marker in the prompt: earlier turns of the session appear in its history
            order = list(self._cells)
            known = [m for m in _MARKER.findall(request.text) if m in self._cells]
            found = max(known, key=order.index) if known else None
            cells = self._cells.get(found, []) if found else []
            index = self._served.get(found, 0) if found else 0
            if found:
                self._served[found] = index + 1
        if index < len(cells):
            return rlm_step(f"step {index + 1}", cells[index])
        return rlm_step("finish", "SUBMIT(answer='done')")


@dataclass
class Turn:
    run_id: str
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def types(self) -> list[str]:
        return [event["type"] for event in self.events]

    @property
    def terminal(self) -> dict[str, Any]:
        return self.events[-1]

    @property
    def output(self) -> str:
        return "\n".join(event["text"] for event in self.events if event["type"] == "output")

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event["type"] == kind]


def new_session(http: httpx.Client, headers: dict[str, str] | None = None, title: str = "test") -> str:
    response = http.post("/api/v1/sessions", json={"title": title}, headers=headers or {})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def run_turn(
    http: Any,
    session_id: str,
    content: str,
    *,
    mode: str = "rlm",
    headers: dict[str, str] | None = None,
    key: str | None = None,
) -> Turn:
    """Start a turn over SSE and read it to its terminal event (works with httpx.Client and TestClient)."""
    all_headers = {"Idempotency-Key": key or uuid.uuid4().hex, **(headers or {})}
    body = {"content": content, "execution_mode": mode}
    with http.stream(
        "POST", f"/api/v1/sessions/{session_id}/turns", json=body, headers=all_headers, timeout=120
    ) as response:
        assert response.status_code == 200, response.read()
        turn = Turn(run_id=response.headers["X-Run-Id"])
        turn.events = parse_sse("".join(response.iter_text()))
    assert turn.events, "the turn streamed no events"
    assert [event["seq"] for event in turn.events] == list(range(1, len(turn.events) + 1))
    assert turn.terminal["type"] in TERMINAL, turn.types
    return turn


def assert_serves_normally(http: Any, script: CellScript, headers: dict[str, str] | None = None) -> None:
    """A fresh session still runs an ordinary RLM turn to the end (the server and other sessions are fine)."""
    session_id = new_session(http, headers, title="canary")
    turn = run_turn(http, session_id, script.register("canary", "print(6 * 7)"), headers=headers)
    assert turn.terminal["type"] == "turn_finished", turn.events[-3:]
    assert "42" in turn.output


@pytest.fixture(scope="module")
def module_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A data dir and database for one module's server (SQLite, or a fresh Postgres database)."""
    data_dir = tmp_path_factory.mktemp("data")
    if not SUITE_ON_POSTGRES:
        yield data_dir, f"sqlite+aiosqlite:///{data_dir / 'fleet.db'}"
        return
    from fleet_rlm.store import migrate

    url = make_postgres_database()
    migrate.upgrade(url, "head")
    try:
        yield data_dir, url
    finally:
        drop_postgres_database(url)


def base_settings(data_dir: Path, database_url: str, **extra: Any) -> Settings:
    return Settings(_env_file=None, data_dir=data_dir, database_url=database_url, **extra)  # type: ignore[call-arg]


def files_containing(root: Path, needle: str) -> list[Path]:
    """Every file under `root` whose bytes contain `needle`."""
    raw = needle.encode()
    hits = []
    for path in root.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink() and raw in path.read_bytes():
                hits.append(path)
        except OSError:
            continue
    return hits
