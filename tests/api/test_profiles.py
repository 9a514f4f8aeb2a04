"""LLM profiles and role bindings over HTTP: encrypted keys never returned, validation, per-user isolation,
connectivity checks and model lists against the fake LM server, env import, effective role resolution."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.store import Database
from fleet_rlm.store.repos import profiles as profiles_repo
from fleet_rlm.testing import FakeLMServer
from tests.api.isolation import assert_error, bearer, on_app, token_settings, user_id

KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(default="OK", model="openai/profile-model") as server:
        yield server


@pytest.fixture
def app_settings(settings: Settings) -> Settings:
    # The fake LM runs on loopback, which token mode refuses unless the operator allows it.
    return token_settings(settings, sandbox_pool_size=0, lm_timeout_s=10, lm_num_retries=0, allow_private_lm_bases=True)


def make_profile(client: TestClient, headers: dict[str, str], lm: FakeLMServer, **extra: object) -> dict:
    body = {"name": "fake", "model": lm.model, "api_base": lm.base_url, "api_key": KEY, **extra}
    response = client.post("/api/v1/llm-profiles", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_create_list_update_delete_never_return_the_key(
    client: TestClient, app_settings: Settings, lm: FakeLMServer
) -> None:
    alice = bearer(app_settings, "alice")
    created = make_profile(client, alice, lm, temperature=0.2)
    assert created["api_key_set"] is True and created["api_key_masked"] == "sk-…cdef"
    assert created["temperature"] == 0.2 and created["engine"] == "auto" and created["roles"] == []
    listed = client.get("/api/v1/llm-profiles", headers=alice)
    assert [item["name"] for item in listed.json()["items"]] == ["fake"]
    renamed = client.patch(
        f"/api/v1/llm-profiles/{created['id']}", json={"name": "renamed", "max_tokens": 99}, headers=alice
    )
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["name"] == "renamed" and renamed.json()["max_tokens"] == 99
    assert renamed.json()["temperature"] == 0.2, "options not sent stay as they were"
    cleared = client.patch(f"/api/v1/llm-profiles/{created['id']}", json={"api_key": None}, headers=alice)
    assert cleared.json()["api_key_set"] is False and cleared.json()["api_key_masked"] == ""
    for response in (created, listed.json(), renamed.json(), cleared.json()):
        assert KEY not in json.dumps(response)
    assert client.delete(f"/api/v1/llm-profiles/{created['id']}", headers=alice).status_code == 204
    assert client.get("/api/v1/llm-profiles", headers=alice).json()["items"] == []
    assert_error(client.delete(f"/api/v1/llm-profiles/{created['id']}", headers=alice), 404, "profile_not_found")


def test_key_is_encrypted_at_rest(client: TestClient, app_settings: Settings, lm: FakeLMServer) -> None:
    alice = bearer(app_settings, "alice")
    make_profile(client, alice, lm)
    owner = user_id(client, alice)

    async def stored(db: Database) -> str | None:
        async with db.session() as s:
            (row,) = await profiles_repo.list_profiles(s, user_id=owner)
            return row.api_key_encrypted

    token = on_app(client, stored)
    assert token and KEY not in token
    assert (
        KEY.encode() not in (app_settings.data_dir / "fleet.db").read_bytes()
        if (app_settings.database_kind == "sqlite")
        else True
    )


def test_validation_errors(client: TestClient, app_settings: Settings, lm: FakeLMServer) -> None:
    alice = bearer(app_settings, "alice")
    make_profile(client, alice, lm)
    assert_error(
        client.post("/api/v1/llm-profiles", json={"name": "fake", "model": "m"}, headers=alice),
        409,
        "profile_name_taken",
    )
    blank = client.post("/api/v1/llm-profiles", json={"name": "x", "model": "  "}, headers=alice)
    assert_error(blank, 422, "invalid_input")
    assert "model" in blank.json()["error"]["message"]
    bad_url = client.post(
        "/api/v1/llm-profiles", json={"name": "x", "model": "m", "api_base": "ftp://h"}, headers=alice
    )
    assert "api_base" in assert_error(bad_url, 422, "invalid_input")["message"]
    unknown = client.post("/api/v1/llm-profiles", json={"name": "x", "model": "m", "colour": 1}, headers=alice)
    assert_error(unknown, 422, "invalid_input")
    reserved = client.post(
        "/api/v1/llm-profiles", json={"name": "x", "model": "m", "extra": {"api_key": "k"}}, headers=alice
    )
    assert "extra" in assert_error(reserved, 422, "invalid_input")["message"]
    negative = client.post("/api/v1/llm-profiles", json={"name": "x", "model": "m", "max_tokens": 0}, headers=alice)
    assert_error(negative, 422, "invalid_input")
    other = make_profile(client, alice, lm, name="other")
    clash = client.patch(f"/api/v1/llm-profiles/{other['id']}", json={"name": "fake"}, headers=alice)
    assert_error(clash, 409, "profile_name_taken")


def test_another_users_profile_is_not_found(client: TestClient, app_settings: Settings, lm: FakeLMServer) -> None:
    alice, bob = bearer(app_settings, "alice"), bearer(app_settings, "bob")
    profile = make_profile(client, alice, lm)
    pid = profile["id"]
    assert client.get("/api/v1/llm-profiles", headers=bob).json()["items"] == []
    assert_error(
        client.patch(f"/api/v1/llm-profiles/{pid}", json={"model": "x"}, headers=bob), 404, "profile_not_found"
    )
    assert_error(client.delete(f"/api/v1/llm-profiles/{pid}", headers=bob), 404, "profile_not_found")
    assert_error(client.post(f"/api/v1/llm-profiles/{pid}/test", headers=bob), 404, "profile_not_found")
    assert_error(client.get(f"/api/v1/llm-profiles/{pid}/models", headers=bob), 404, "profile_not_found")
    bind = client.patch("/api/v1/llm-roles", json={"root": {"profile_id": pid}}, headers=bob)
    assert_error(bind, 404, "profile_not_found")
    # bob may use the same name: names are unique per user
    assert make_profile(client, bob, lm)["name"] == "fake"


def test_check_and_model_list_use_the_decrypted_key(
    client: TestClient, app_settings: Settings, lm: FakeLMServer
) -> None:
    alice = bearer(app_settings, "alice")
    profile = make_profile(client, alice, lm)
    result = client.post(f"/api/v1/llm-profiles/{profile['id']}/test", headers=alice).json()
    assert result["ok"] is True and result["model"] == lm.model and result["error_code"] is None
    assert lm.last_request is not None
    assert lm.last_request.headers.get("authorization") == f"Bearer {KEY}"
    models = client.get(f"/api/v1/llm-profiles/{profile['id']}/models", headers=alice)
    assert models.status_code == 200, models.text
    assert "profile-model" in models.json()["models"]


def test_check_reports_an_unreachable_endpoint_as_data(
    client: TestClient, app_settings: Settings, closed_port: int
) -> None:
    alice = bearer(app_settings, "alice")
    body = {"name": "down", "model": "openai/x", "api_base": f"http://127.0.0.1:{closed_port}/v1"}
    profile = client.post("/api/v1/llm-profiles", json=body, headers=alice).json()
    result = client.post(f"/api/v1/llm-profiles/{profile['id']}/test", headers=alice)
    assert result.status_code == 200
    data = result.json()
    assert data["ok"] is False and data["error_code"] and data["action"]


def test_import_env_is_idempotent(settings: Settings, lm: FakeLMServer) -> None:
    configured = settings.model_copy(
        update={
            "lm_model": lm.model,
            "lm_api_base": lm.base_url,
            "lm_api_key": SecretStr(KEY),
            "delegate_lm_model": "openai/small",
            "sandbox_pool_size": 0,
        }
    )
    with TestClient(create_app(configured)) as client:
        first = client.post("/api/v1/llm-profiles/import-env")
        assert first.status_code == 200, first.text
        assert [(i["name"], i["status"]) for i in first.json()["items"]] == [
            ("env", "created"),
            ("env-delegate", "created"),
        ]
        delegate = first.json()["items"][1]["profile"]
        assert delegate["model"] == "openai/small" and delegate["api_base"] == lm.base_url
        assert not delegate["api_key_set"] and KEY not in first.text
        assert delegate["key_source"] == "server_env" and delegate["has_key"]
        again = client.post("/api/v1/llm-profiles/import-env").json()
        assert [i["status"] for i in again["items"]] == ["unchanged", "unchanged"]
        env_id = first.json()["items"][0]["profile"]["id"]
        client.patch(f"/api/v1/llm-profiles/{env_id}", json={"model": "openai/edited"})
        third = client.post("/api/v1/llm-profiles/import-env").json()
        assert [i["status"] for i in third["items"]] == ["updated", "unchanged"]
        assert len(client.get("/api/v1/llm-profiles").json()["items"]) == 2


def test_import_env_without_models_creates_nothing(settings: Settings) -> None:
    admin_settings = token_settings(settings, sandbox_pool_size=0, admin_users="root")
    with TestClient(create_app(admin_settings)) as client:
        response = client.post("/api/v1/llm-profiles/import-env", headers=bearer(admin_settings, "root"))
    assert response.status_code == 200 and response.json()["items"] == []


def test_roles_show_env_fallbacks_bindings_and_overrides(settings: Settings, lm: FakeLMServer) -> None:
    configured = settings.model_copy(update={"lm_model": "openai/env-root", "sandbox_pool_size": 0})
    with TestClient(create_app(configured)) as client:
        roles = {item["role"]: item for item in client.get("/api/v1/llm-roles").json()["items"]}
        assert list(roles) == ["root", "sub", "delegate", "router", "reflection"]
        assert roles["root"]["effective"]["source"] == "env"
        assert roles["root"]["effective"]["model"] == "openai/env-root"
        assert roles["root"]["effective"]["profile_id"] is None
        assert roles["sub"]["effective"]["source"] == "fallback" and "root" in roles["sub"]["effective"]["reason"]
        assert roles["delegate"]["effective"]["model"] == "openai/env-root"
        profile = make_profile(client, {}, lm)
        bound = client.patch(
            "/api/v1/llm-roles",
            json={
                "sub": {"profile_id": profile["id"]},
                "router": {"profile_id": profile["id"], "model": "openai/tiny"},
            },
        )
        assert bound.status_code == 200, bound.text
        roles = {item["role"]: item for item in bound.json()["items"]}
        assert roles["sub"]["binding"]["profile_name"] == "fake"
        assert roles["sub"]["effective"] == {
            "source": "binding",
            "profile_name": "fake",
            "profile_id": profile["id"],
            "model": lm.model,
            "api_base": lm.base_url,
            "reason": "bound to profile 'fake'",
        }
        assert roles["delegate"]["effective"]["source"] == "fallback"
        assert roles["delegate"]["effective"]["model"] == lm.model, "delegate falls back to sub"
        assert roles["router"]["effective"]["model"] == "openai/tiny"
        listed = client.get("/api/v1/llm-profiles").json()["items"][0]
        assert listed["roles"] == ["router", "sub"]
        cleared = client.patch("/api/v1/llm-roles", json={"sub": None}).json()
        roles = {item["role"]: item for item in cleared["items"]}
        assert roles["sub"]["binding"] is None and roles["sub"]["effective"]["source"] == "fallback"
        assert roles["router"]["binding"] is not None, "roles not sent stay bound"
        client.delete(f"/api/v1/llm-profiles/{profile['id']}")
        roles = {item["role"]: item for item in client.get("/api/v1/llm-roles").json()["items"]}
        assert roles["router"]["binding"] is None, "deleting a profile removes its bindings"


def test_roles_without_any_model_explain_the_problem(client: TestClient, app_settings: Settings) -> None:
    items = client.get("/api/v1/llm-roles", headers=bearer(app_settings, "alice")).json()["items"]
    for item in items:
        assert item["effective"] is None
        assert item["problem"]["code"] == "model_not_configured" and item["problem"]["action"]


@pytest.fixture
def closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
