"""A profile's extra HTTP headers are secrets like its key (issue #40).

Against a real server and fake LM HTTP servers that record the headers they receive: values are encrypted in the
row and never returned (responses name the headers), they do reach the profile's endpoint (a test call and a
real turn), an update keeps, replaces and removes them, a changed model or api_base drops them (re-pointing a
profile is no way to send a gateway token elsewhere), and the old plaintext route (`extra.extra_headers`) is
closed. The recorder gets them as secret values by their position (dspy.LM's `extra_headers`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import text

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.llm import build_lm
from fleet_rlm.llm.profiles import LMProfile
from fleet_rlm.runtime.lm_exchange import secrets_of
from fleet_rlm.store import Database
from fleet_rlm.testing import FakeLMServer
from tests.api.isolation import assert_error, on_app
from tests.security.harness import CellScript, base_settings, files_containing, new_session, run_turn

PROFILES = "/api/v1/llm-profiles"
ORG = "org-secret-9f8e7d6c5b"
TOKEN = "gw-token-secret-1a2b3c4d5e"
NEW_TOKEN = "gw-token-rotated-6f7a8b9c0d"


@dataclass
class App:
    client: TestClient
    lm: FakeLMServer
    other: FakeLMServer
    script: CellScript
    data_dir: Path


@pytest.fixture(scope="module")
def app(module_data: tuple[Path, str]) -> Iterator[App]:
    data_dir, database_url = module_data
    script = CellScript(answer="ok")
    with FakeLMServer(rule=script) as lm, FakeLMServer(default="OK", model=lm.model) as other:
        settings = base_settings(
            data_dir, database_url, lm_model=lm.model, lm_api_base=lm.base_url, sandbox_pool_size=0, lm_num_retries=0
        )
        with TestClient(create_app(settings)) as client:
            yield App(client, lm, other, script, data_dir)


def create(app: App, name: str, headers: dict[str, str], **extra: Any) -> dict[str, Any]:
    body = {"name": name, "model": app.lm.model, "api_base": app.lm.base_url, "extra_headers": headers, **extra}
    response = app.client.post(PROFILES, json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


def patch(app: App, profile: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    response = app.client.patch(f"{PROFILES}/{profile['id']}", json=body)
    assert response.status_code == 200, response.text
    for value in (ORG, TOKEN, NEW_TOKEN):
        assert value not in response.text
    return dict(response.json())


def sent_headers(app: App, server: FakeLMServer, profile: dict[str, Any]) -> dict[str, str]:
    """The headers `server` received for one test call of the profile."""
    server.clear()
    result = app.client.post(f"{PROFILES}/{profile['id']}/test")
    assert result.status_code == 200, result.text
    assert server.last_request is not None, result.text
    return dict(server.last_request.headers)


def rows(app: App) -> list[Any]:
    async def read(db: Database) -> list[Any]:
        async with db.session() as s:
            return list((await s.execute(text("SELECT * FROM llm_profiles"))).all())

    return on_app(app.client, read)


def test_values_are_encrypted_and_never_returned(app: App) -> None:
    created = create(app, "gateway", {"X-Org": ORG, "x-gateway-token": TOKEN})
    assert created["extra_header_names"] == ["x-gateway-token", "X-Org"]
    responses = [
        app.client.get(PROFILES),
        app.client.patch(f"{PROFILES}/{created['id']}", json={"temperature": 0.1}),
        app.client.post(f"{PROFILES}/{created['id']}/test"),
        app.client.get(f"{PROFILES}/{created['id']}/models"),
        app.client.patch("/api/v1/llm-roles", json={"sub": {"profile_id": created["id"]}}),
        app.client.get("/api/v1/llm-roles"),
    ]
    for response in [*responses]:
        assert response.status_code < 500, response.text
        assert ORG not in response.text and TOKEN not in response.text, response.request.url
    listed = next(p for p in responses[0].json()["items"] if p["id"] == created["id"])
    assert listed["extra_header_names"] == ["x-gateway-token", "X-Org"] and listed["extra"] == {}

    cells = [str(cell) for row in rows(app) for cell in row]
    assert not any(ORG in cell or TOKEN in cell for cell in cells), "a header value is stored in clear"
    assert not any("X-Org" in cell for cell in cells), "names too live only inside the token"
    assert any(cell.startswith("gAAAAA") for cell in cells), "no Fernet token in the row"


def test_headers_reach_the_endpoint_but_no_event_recording_or_file(app: App) -> None:
    profile = create(app, "turns", {"X-Org": ORG, "X-Gateway-Token": TOKEN})
    received = sent_headers(app, app.lm, profile)
    assert received.get("x-org") == ORG and received.get("x-gateway-token") == TOKEN, "the test call sends them"

    bound = app.client.patch("/api/v1/llm-roles", json={"root": {"profile_id": profile["id"]}})
    assert bound.status_code == 200, bound.text
    session_id = new_session(app.client)
    app.lm.clear()
    turn = run_turn(app.client, session_id, app.script.register("headers", "print('hello')"))
    assert turn.terminal["type"] == "turn_finished", turn.types
    assert app.lm.requests and all(r.headers.get("x-gateway-token") == TOKEN for r in app.lm.requests)
    events = app.client.get(f"/api/v1/runs/{turn.run_id}/events", params={"limit": 200}).text
    export = app.client.get(f"/api/v1/sessions/{session_id}/export").text
    for blob in (json.dumps(turn.events), events, export):
        assert ORG not in blob and TOKEN not in blob
    assert not files_containing(app.data_dir, TOKEN), "a file under the data dir (database, recordings) holds it"
    assert app.client.patch("/api/v1/llm-roles", json={"root": None}).status_code == 200


def test_update_keeps_replaces_and_removes_headers(app: App) -> None:
    profile = create(app, "updates", {"X-Org": ORG, "X-Gateway-Token": TOKEN})

    resent = patch(app, profile, {"name": "updates", "extra_headers": {"X-Org": None, "X-Gateway-Token": None}})
    assert resent["extra_header_names"] == ["X-Gateway-Token", "X-Org"] and resent["action"] is None
    assert sent_headers(app, app.lm, profile)["x-gateway-token"] == TOKEN, "names without values keep them"

    rotated = patch(app, profile, {"extra_headers": {"X-Org": None, "X-Gateway-Token": NEW_TOKEN}})
    assert rotated["extra_header_names"] == ["X-Gateway-Token", "X-Org"]
    received = sent_headers(app, app.lm, profile)
    assert received["x-gateway-token"] == NEW_TOKEN and received["x-org"] == ORG

    removed = patch(app, profile, {"extra_headers": {"X-Gateway-Token": None}})
    assert removed["extra_header_names"] == ["X-Gateway-Token"]
    assert "x-org" not in sent_headers(app, app.lm, profile), "a name left out is removed"

    unknown = app.client.patch(f"{PROFILES}/{profile['id']}", json={"extra_headers": {"X-New": None}})
    assert "X-New" in assert_error(unknown, 422, "header_value_missing")["message"]

    cleared = patch(app, profile, {"extra_headers": None})
    assert cleared["extra_header_names"] == []
    assert "x-gateway-token" not in sent_headers(app, app.lm, profile)


def test_changing_model_or_api_base_drops_header_values(app: App) -> None:
    """Re-pointing a profile (even with the form re-sent whole, names and all) sends no stored value to the new
    endpoint; values sent again in the same request do go there."""
    profile = create(app, "repoint", {"X-Gateway-Token": TOKEN})
    moved = patch(app, profile, {"api_base": app.other.base_url, "extra_headers": {"X-Gateway-Token": None}})
    assert moved["extra_header_names"] == [] and "X-Gateway-Token" in moved["action"]
    assert "x-gateway-token" not in sent_headers(app, app.other, profile)

    patch(app, profile, {"api_base": app.lm.base_url, "extra_headers": {"X-Gateway-Token": TOKEN}})
    remodeled = patch(app, profile, {"model": "openai/another-model"})
    assert remodeled["extra_header_names"] == [] and "extra_headers" in remodeled["action"]

    resent = patch(app, profile, {"api_base": app.other.base_url, "extra_headers": {"X-Gateway-Token": NEW_TOKEN}})
    assert resent["extra_header_names"] == ["X-Gateway-Token"] and resent["action"] is None
    assert sent_headers(app, app.other, profile)["x-gateway-token"] == NEW_TOKEN
    for request in app.other.requests:
        assert TOKEN not in json.dumps(request.headers)


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"extra": {"extra_headers": {"X-Org": ORG}}}, "extra_headers"),
        ({"extra": {"headers": {"X-Org": ORG}}}, "headers"),
        ({"extra": {"default_headers": {"X-Org": ORG}}}, "default_headers"),
        ({"extra_headers": {"X-Org": "a\r\nX-Injected: 1"}}, "one line"),
        ({"extra_headers": {"Host": "evil.example"}}, "Host"),
        ({"extra_headers": {"Bad Name": "v"}}, "HTTP token"),
        ({"extra_headers": {"X-Org": "a", "x-org": "b"}}, "twice"),
    ],
)
def test_headers_only_through_the_encrypted_field(app: App, body: dict[str, Any], needle: str) -> None:
    response = app.client.post(PROFILES, json={"name": "refused", "model": "openai/m", **body})
    error = assert_error(response, 422, "invalid_input")
    assert needle in error["message"] and ORG not in response.text


def test_header_values_reach_the_recorder_as_secrets(settings: Settings) -> None:
    """The recorder scrubs what `secrets_of` finds on an LM; header values are found by their position."""
    profile = LMProfile(
        name="p",
        model="openai/m",
        api_base="http://127.0.0.1:9/v1",
        extra_headers={"X-Org": SecretStr(ORG), "X-Gateway-Token": SecretStr(TOKEN)},
    )
    assert ORG not in repr(profile) and TOKEN not in repr(profile)
    lm = build_lm(profile, settings=settings)
    assert lm.kwargs["extra_headers"] == {"X-Org": ORG, "X-Gateway-Token": TOKEN}
    assert {ORG, TOKEN} <= secrets_of(lm)
