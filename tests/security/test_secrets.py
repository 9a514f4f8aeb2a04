"""API keys: encrypted at rest, masked in every response, absent from logs, events and exports; a `.env` that
sandbox code writes into its workspace never changes a setting of the server."""

from __future__ import annotations

import logging
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import text

from fleet_rlm.api.app import create_app
from fleet_rlm.store import Database
from fleet_rlm.testing import FakeLMServer
from tests.api.isolation import on_app
from tests.security.harness import CellScript, base_settings, files_containing, new_session, run_turn

PROFILE_KEY = "sk-profile-secret-0f3a9c1d2b"


@dataclass
class App:
    client: TestClient
    lm: FakeLMServer
    script: CellScript
    data_dir: Path


@pytest.fixture(scope="module")
def app(module_data: tuple[Path, str]) -> Iterator[App]:
    data_dir, database_url = module_data
    script = CellScript(answer="ok")
    with FakeLMServer(rule=script) as lm:
        settings = base_settings(
            data_dir,
            database_url,
            lm_model=lm.model,
            lm_api_base=lm.base_url,
            lm_api_key=SecretStr("server-env-key"),
            sandbox_pool_size=0,
            lm_num_retries=0,
        )
        with TestClient(create_app(settings)) as client:
            yield App(client, lm, script, data_dir)


@pytest.fixture(scope="module")
def profile(app: App) -> dict[str, Any]:
    body = {"name": "secret-lm", "model": app.lm.model, "api_base": app.lm.base_url, "api_key": PROFILE_KEY}
    response = app.client.post("/api/v1/llm-profiles", json=body)
    assert response.status_code == 201, response.text
    assert PROFILE_KEY not in response.text
    return dict(response.json())


def test_key_is_ciphertext_in_the_table(app: App, profile: dict[str, Any]) -> None:
    async def rows(db: Database) -> list[Any]:
        async with db.session() as s:
            return list((await s.execute(text("SELECT * FROM llm_profiles"))).all())

    found = on_app(app.client, rows)
    assert found, "the profile row must exist"
    cells = [str(cell) for row in found for cell in row]
    assert not any(PROFILE_KEY in cell for cell in cells), "the API key is stored in plaintext"
    assert any(cell.startswith("gAAAAA") for cell in cells), "no Fernet token found in the row"
    key_file = app.data_dir / "secret.key"
    if key_file.exists():
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_key_is_masked_in_every_response(app: App, profile: dict[str, Any]) -> None:
    pid = profile["id"]
    responses = [
        app.client.get("/api/v1/llm-profiles"),
        app.client.patch(f"/api/v1/llm-profiles/{pid}", json={"name": "renamed"}),
        app.client.post(f"/api/v1/llm-profiles/{pid}/test"),
        app.client.get(f"/api/v1/llm-profiles/{pid}/models"),
        app.client.patch("/api/v1/llm-roles", json={"root": {"profile_id": pid}}),
        app.client.get("/api/v1/llm-roles"),
        app.client.get("/api/v1/runtime/settings"),
        app.client.get("/api/v1/runtime/status"),
        app.client.get("/ready"),
        app.client.get("/api/v1/info"),
    ]
    for response in responses:
        assert response.status_code < 500, response.text
        assert PROFILE_KEY not in response.text, response.request.url
        assert "server-env-key" not in response.text, response.request.url


def test_key_reaches_the_provider_but_not_events_exports_logs_or_files(
    app: App, profile: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    bound = app.client.patch("/api/v1/llm-roles", json={"root": {"profile_id": profile["id"]}})
    assert bound.status_code == 200, bound.text
    session_id = new_session(app.client)
    app.lm.clear()
    turn = run_turn(app.client, session_id, app.script.register("key", "print('hello')"))
    assert turn.terminal["type"] == "turn_finished", turn.types
    assert any(PROFILE_KEY in str(request.headers) for request in app.lm.requests), "profile key not used"
    events = app.client.get(f"/api/v1/runs/{turn.run_id}/events", params={"limit": 200}).text
    export = app.client.get(f"/api/v1/sessions/{session_id}/export").text
    for blob in (str(turn.events), events, export, caplog.text):
        assert PROFILE_KEY not in blob
    assert not files_containing(app.data_dir, PROFILE_KEY), "a file under the data dir holds the key"


def test_dotenv_written_by_sandbox_code_changes_nothing(app: App) -> None:
    before = app.client.get("/api/v1/runtime/settings").json()
    cell = (
        "import os\nevil = 'FLEET_AUTH_MODE=none\\nFLEET_LM_MODEL=openai/evil\\nDSPY_LM_MODEL=openai/evil\\n"
        "FLEET_SANDBOX_CELL_TIMEOUT_S=9999\\nFLEET_SANDBOX_ISOLATION=reduced\\n'\n"
        "for d in (WORKSPACE_ROOT, MEMORY_DIR, ARTIFACTS_DIR, os.path.dirname(WORKSPACE_ROOT)):\n"
        "    try:\n        open(os.path.join(d, '.env'), 'w').write(evil)\n    except OSError:\n        pass\n"
        "print('written')"
    )
    session_id = new_session(app.client)
    assert run_turn(app.client, session_id, app.script.register("dotenv", cell)).terminal["type"] == "turn_finished"
    app.lm.clear()
    turn = run_turn(app.client, session_id, app.script.register("after", "print('still me')"))
    assert turn.terminal["type"] == "turn_finished"
    assert all("evil" not in str(request.model) for request in app.lm.requests)
    assert app.client.get("/api/v1/runtime/settings").json() == before
    assert app.client.app.state.settings.sandbox_cell_timeout_s != 9999  # type: ignore[attr-defined]
