"""The operator's LM key stays on the server, and a profile's api_base is no SSRF primitive.

Reproduces the attack chain of issue 13 item 5 with real HTTP servers: `import-env` as a plain token user is
refused; as an admin it makes a profile that refers to the server's key without holding it; re-pointing that
profile (or any profile) drops the key, so `test` sends no credential to the new URL. In token mode api_bases
that resolve to loopback/private/link-local addresses are refused at save and again at use; redirects are never
followed; the check never echoes the endpoint's answer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.store import Database
from fleet_rlm.store.repos import profiles as profiles_repo
from fleet_rlm.testing import FakeLMServer
from tests.api.isolation import assert_error, bearer, on_app, token_settings, user_id

OPERATOR_KEY = "sk-operator-0123456789abcdef"
PROFILES = "/api/v1/llm-profiles"
SECRET_ANSWER = "internal-metadata-token-42"


@pytest.fixture
def operator_lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(default="OK", model="openai/operator-model") as server:
        yield server


@pytest.fixture
def attacker() -> Iterator[FakeLMServer]:
    """The URL an attacker re-points a profile to; it records every request's headers."""
    with FakeLMServer(default=SECRET_ANSWER, model="openai/operator-model") as server:
        yield server


def server_settings(settings: Settings, lm: FakeLMServer, **extra: Any) -> Settings:
    return token_settings(
        settings,
        lm_model=lm.model,
        lm_api_base=lm.base_url,
        lm_api_key=SecretStr(OPERATOR_KEY),
        sandbox_pool_size=0,
        lm_num_retries=0,
        lm_timeout_s=10,
        admin_users="root",
        **extra,
    )


def stored_rows(client: TestClient, owner: str) -> list[dict[str, Any]]:
    async def read(db: Database) -> list[dict[str, Any]]:
        async with db.session() as s:
            rows = await profiles_repo.list_profiles(s, user_id=owner)
        return [row.model_dump(mode="json") for row in rows]

    return on_app(client, read)


def test_import_env_is_for_admins_and_the_key_never_leaves_the_server(
    settings: Settings, operator_lm: FakeLMServer, attacker: FakeLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-env-var-key-99")  # the provider's own variable, too
    configured = server_settings(settings, operator_lm, allow_private_lm_bases=True)  # both servers on loopback
    with TestClient(create_app(configured)) as client:
        bob, root = bearer(configured, "bob"), bearer(configured, "root")
        assert client.get("/api/v1/auth/me", headers=bob).json()["is_admin"] is False
        assert client.get("/api/v1/auth/me", headers=root).json()["is_admin"] is True
        assert_error(client.post(f"{PROFILES}/import-env", headers=bob), 403, "admin_required")
        assert client.get(PROFILES, headers=bob).json()["items"] == []

        imported = client.post(f"{PROFILES}/import-env", headers=root)
        assert imported.status_code == 200, imported.text
        (item,) = imported.json()["items"]
        profile = item["profile"]
        assert profile["key_source"] == "server_env" and profile["has_key"] and not profile["api_key_set"]
        rows = stored_rows(client, user_id(client, root))
        assert [(r["key_source"], r["api_key_encrypted"]) for r in rows] == [("env", None)], "no key copied"

        tested = client.post(f"{PROFILES}/{profile['id']}/test", headers=root).json()
        assert tested["ok"], tested
        assert operator_lm.last_request is not None
        assert operator_lm.last_request.headers.get("authorization") == f"Bearer {OPERATOR_KEY}", "used server-side"

        moved = client.patch(f"{PROFILES}/{profile['id']}", json={"api_base": attacker.base_url}, headers=root)
        assert moved.status_code == 200, moved.text
        assert moved.json()["has_key"] is False and moved.json()["key_source"] is None
        assert "api_key" in moved.json()["action"]
        rows = stored_rows(client, user_id(client, root))
        assert [(r["key_source"], r["api_key_encrypted"]) for r in rows] == [(None, None)]

        result = client.post(f"{PROFILES}/{profile['id']}/test", headers=root)
        assert result.status_code == 200 and SECRET_ANSWER not in result.text, "the answer is never echoed"
        assert attacker.requests, "the re-pointed profile does call its new URL..."
        for request in attacker.requests:  # ...but without any credential of the server
            assert request.headers.get("authorization") in (None, "Bearer EMPTY"), request.headers
            assert OPERATOR_KEY not in json.dumps(request.headers) and "sk-server-env" not in json.dumps(
                request.headers
            )
        everything = imported.text + moved.text + result.text + json.dumps(client.get(PROFILES, headers=root).json())
        assert OPERATOR_KEY not in everything


def test_changing_model_or_api_base_of_any_profile_drops_its_key(
    settings: Settings, operator_lm: FakeLMServer, attacker: FakeLMServer
) -> None:
    configured = server_settings(settings, operator_lm, allow_private_lm_bases=True)
    with TestClient(create_app(configured)) as client:
        alice = bearer(configured, "alice")
        body = {"name": "mine", "model": "openai/m", "api_base": operator_lm.base_url, "api_key": "sk-alice-000111222"}
        created = client.post(PROFILES, json=body, headers=alice).json()
        same = client.patch(
            f"{PROFILES}/{created['id']}", json={"model": "openai/m", "temperature": 0.1}, headers=alice
        )
        assert same.json()["api_key_set"] and same.json()["action"] is None, "unchanged values keep the key"
        renamed = client.patch(f"{PROFILES}/{created['id']}", json={"model": "openai/other"}, headers=alice).json()
        assert renamed["api_key_set"] is False and renamed["has_key"] is False and renamed["action"]
        rekeyed = client.patch(
            f"{PROFILES}/{created['id']}",
            json={"api_base": attacker.base_url, "api_key": "sk-alice-new-333444"},
            headers=alice,
        ).json()
        assert rekeyed["api_key_set"] and rekeyed["action"] is None, "a key sent with the change is kept"
        moved = client.patch(f"{PROFILES}/{created['id']}", json={"api_base": operator_lm.base_url}, headers=alice)
        assert moved.json()["api_key_set"] is False
        client.post(f"{PROFILES}/{created['id']}/test", headers=alice)
        assert operator_lm.last_request is not None
        assert "sk-alice-new" not in json.dumps(operator_lm.last_request.headers)


BLOCKED_BASES = [
    "http://127.0.0.1:8000/v1",
    "http://localhost:11434/v1",  # a host name resolving to 127.0.0.1
    "http://0.0.0.0:8000/v1",
    "http://[::1]:8000/v1",
    "http://[::ffff:127.0.0.1]/v1",
    "http://2130706433/v1",  # decimal 127.0.0.1
    "http://0177.0.0.1/v1",  # octal 127.0.0.1
    "http://10.1.2.3/v1",
    "http://192.168.0.10/v1",
    "http://169.254.169.254/latest",  # cloud metadata
    "http://[fe80::1]/v1",
]


def test_private_api_bases_are_refused_in_token_mode(settings: Settings, operator_lm: FakeLMServer) -> None:
    configured = server_settings(settings, operator_lm)
    with TestClient(create_app(configured)) as client:
        alice = bearer(configured, "alice")
        for base in BLOCKED_BASES:
            response = client.post(PROFILES, json={"name": "x", "model": "openai/m", "api_base": base}, headers=alice)
            assert_error(response, 403, "lm_base_blocked")  # also where the URL parser refuses the spelling (octal)
        ok = client.post(PROFILES, json={"name": "x", "model": "openai/m"}, headers=alice)
        assert ok.status_code == 201, "no api_base (the provider's own) is fine"
        patch = client.patch(f"{PROFILES}/{ok.json()['id']}", json={"api_base": BLOCKED_BASES[1]}, headers=alice)
        assert_error(patch, 403, "lm_base_blocked")
        assert client.get(PROFILES, headers=alice).json()["items"][0]["api_base"] is None


def test_the_rule_is_checked_again_at_use(settings: Settings, operator_lm: FakeLMServer) -> None:
    """Saved while allowed (or while the name resolved elsewhere), refused when used: test, models, turns."""
    allowed = server_settings(settings, operator_lm, allow_private_lm_bases=True)
    with TestClient(create_app(allowed)) as client:
        alice = bearer(allowed, "alice")
        body = {
            "name": "local",
            "model": operator_lm.model,
            "api_base": operator_lm.base_url,
            "api_key": "sk-a-1234567",
        }
        profile = client.post(PROFILES, json=body, headers=alice).json()
        assert client.patch("/api/v1/llm-roles", json={"root": {"profile_id": profile["id"]}}, headers=alice).is_success
    calls = len(operator_lm.requests)
    strict = server_settings(settings, operator_lm)
    with TestClient(create_app(strict)) as client:
        alice = bearer(strict, "alice")
        assert_error(client.post(f"{PROFILES}/{profile['id']}/test", headers=alice), 403, "lm_base_blocked")
        assert_error(client.get(f"{PROFILES}/{profile['id']}/models", headers=alice), 403, "lm_base_blocked")
        session = client.post("/api/v1/sessions", json={"title": "t"}, headers=alice).json()["id"]
        with client.stream(
            "POST",
            f"/api/v1/sessions/{session}/turns",
            json={"content": "hi", "execution_mode": "direct"},
            headers={**alice, "Idempotency-Key": "k1"},
        ) as response:
            text = "".join(response.iter_text())
        assert '"turn_failed"' in text and "lm_base_blocked" in text
    assert len(operator_lm.requests) == calls, "nothing reached the private address"


def test_auth_none_keeps_local_endpoints(settings: Settings, operator_lm: FakeLMServer) -> None:
    local = settings.model_copy(update={"sandbox_pool_size": 0, "lm_timeout_s": 10})
    with TestClient(create_app(local)) as client:
        body = {"name": "ollama", "model": operator_lm.model, "api_base": operator_lm.base_url}
        created = client.post(PROFILES, json=body)
        assert created.status_code == 201, created.text
        assert client.post(f"{PROFILES}/{created.json()['id']}/test").json()["ok"]
        assert client.get("/api/v1/auth/me").json()["is_admin"] is True


class Redirector:
    """A real HTTP server that answers every request with 307 to `target` and records what it was sent."""

    def __init__(self, target: str) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _redirect(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                outer.requests.append((self.command, self.path, dict(self.headers)))
                self.send_response(307)
                self.send_header("Location", target + self.path.removeprefix("/v1"))
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = _redirect

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Redirector:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_redirects_are_never_followed(
    settings: Settings, operator_lm: FakeLMServer, attacker: FakeLMServer, engine: str
) -> None:
    configured = server_settings(settings, operator_lm, allow_private_lm_bases=True)
    with Redirector(attacker.base_url) as front, TestClient(create_app(configured)) as client:
        alice = bearer(configured, "alice")
        body = {
            "name": "r",
            "model": attacker.model,
            "api_base": front.base_url,
            "api_key": "sk-al-7654321",
            "engine": engine,
        }
        profile = client.post(PROFILES, json=body, headers=alice).json()
        tested = client.post(f"{PROFILES}/{profile['id']}/test", headers=alice)
        assert tested.status_code == 200 and SECRET_ANSWER not in tested.text
        models = client.get(f"{PROFILES}/{profile['id']}/models", headers=alice)
        assert_error(models, 502, "models_not_listable")
        assert {method for method, _, _ in front.requests} == {"GET", "POST"}, "the front was asked..."
        assert attacker.requests == [], "...and its redirect target never"
