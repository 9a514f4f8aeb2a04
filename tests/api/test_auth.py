"""Auth modes (none, token, oidc with a local JWKS server), /auth/me, and single-use WebSocket tickets."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import WebSocket
from fastapi.testclient import TestClient
from jwt.algorithms import RSAAlgorithm

from fleet_rlm.api.app import create_app
from fleet_rlm.api.auth import TicketUserDep, consume_ticket, mint_token
from fleet_rlm.config import Settings
from fleet_rlm.store import utcnow
from fleet_rlm.store.repos import tickets, users

from .isolation import SECRET, assert_error, bearer, on_app, token_settings

ISSUER = "https://issuer.test"
AUDIENCE = "fleet-rlm"


def test_none_mode_is_the_local_user_with_a_workspace(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        me = client.get("/api/v1/auth/me")
        assert me.status_code == 200
        body = me.json()
        assert body["name"] == "local" and body["auth_mode"] == "none"
        root = settings.workspaces_dir / body["workspace_id"]
        assert all((root / sub).is_dir() for sub in ("memory", "artifacts", "buffers", "meta"))
        assert client.get("/api/v1/auth/me").json()["workspace_id"] == body["workspace_id"]


def test_token_mode_requires_a_valid_bearer_token(settings: Settings) -> None:
    secured = token_settings(settings)
    with TestClient(create_app(secured)) as client:
        missing = assert_error(client.get("/api/v1/auth/me"), 401, "unauthorized")
        assert "fleet-rlm auth token" in missing["action"]
        assert_error(client.get("/api/v1/auth/me", headers={"Authorization": "Bearer nonsense"}), 401, "unauthorized")
        forged = jwt.encode({"sub": "mallory", "exp": int(time.time()) + 60}, "other-key-" * 4, algorithm="HS256")
        assert_error(client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {forged}"}), 401, "unauthorized")
        expired = jwt.encode({"sub": "alice", "exp": int(time.time()) - 120}, SECRET, algorithm="HS256")
        body = assert_error(
            client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {expired}"}), 401, "unauthorized"
        )
        assert "expired" in body["message"]
        no_exp = jwt.encode({"sub": "alice"}, SECRET, algorithm="HS256")
        assert_error(client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {no_exp}"}), 401, "unauthorized")

        alice = client.get("/api/v1/auth/me", headers=bearer(secured, "alice")).json()
        bob = client.get("/api/v1/auth/me", headers=bearer(secured, "bob")).json()
        assert (alice["name"], bob["name"]) == ("alice", "bob")
        assert alice["id"] != bob["id"] and alice["workspace_id"] != bob["workspace_id"]


def test_token_mode_without_a_secret_says_how_to_fix_it(settings: Settings) -> None:
    with TestClient(create_app(settings.model_copy(update={"auth_mode": "token"}))) as client:
        body = assert_error(
            client.get("/api/v1/auth/me", headers={"Authorization": "Bearer x"}), 503, "auth_misconfigured"
        )
        assert "FLEET_JWT_SECRET" in body["action"]
    with pytest.raises(ValueError):
        mint_token(token_settings(settings), "")


def _ticket_app(settings: Settings) -> Any:
    app = create_app(settings)

    @app.get("/test/whoami")
    async def whoami(user: TicketUserDep) -> dict[str, str]:
        return {"name": user.name}

    @app.websocket("/test/ws")
    async def ws(websocket: WebSocket, user: TicketUserDep) -> None:
        await websocket.accept()
        await websocket.send_json({"name": user.name})
        await websocket.close()

    return app


def test_ws_ticket_is_single_use(settings: Settings) -> None:
    secured = token_settings(settings)
    with TestClient(_ticket_app(secured)) as client:
        assert_error(client.post("/api/v1/auth/ws-ticket"), 401, "unauthorized")
        issued = client.post("/api/v1/auth/ws-ticket", headers=bearer(secured, "alice"))
        assert issued.status_code == 201
        body = issued.json()
        assert 0 < body["expires_in"] <= 60
        ticket = body["ticket"]
        assert client.get("/test/whoami", params={"ticket": ticket}).json() == {"name": "alice"}
        again = assert_error(client.get("/test/whoami", params={"ticket": ticket}), 401, "unauthorized")
        assert "ws-ticket" in again["action"]
        assert_error(client.get("/test/whoami"), 401, "unauthorized")

        second = client.post("/api/v1/auth/ws-ticket", headers=bearer(secured, "alice")).json()["ticket"]
        with client.websocket_connect(f"/test/ws?ticket={second}") as socket:
            assert socket.receive_json() == {"name": "alice"}


def test_ws_ticket_is_stored_hashed_and_expires(settings: Settings) -> None:
    secured = token_settings(settings)
    with TestClient(create_app(secured)) as client:
        ticket = client.post("/api/v1/auth/ws-ticket", headers=bearer(secured, "alice")).json()["ticket"]

        async def stored_ids(db: Any) -> list[str]:
            from sqlmodel import select

            from fleet_rlm.store.models import WsTicket

            async with db.transaction() as s:
                return [row.id for row in (await s.execute(select(WsTicket))).scalars()]

        ids = on_app(client, stored_ids)
        assert ticket not in ids and len(ids) == 1 and len(ids[0]) == 64

        async def plant_stale(db: Any) -> None:
            async with db.transaction() as s:
                alice = await users.get_user_by_name(s, name="alice")
                stale = utcnow() - timedelta(hours=2)
                await tickets.create_ticket(s, token_hash="f" * 64, user_id=alice.id, expires_at=stale)

        on_app(client, plant_stale)
        client.post("/api/v1/auth/ws-ticket", headers=bearer(secured, "alice"))
        remaining = on_app(client, stored_ids)
        assert "f" * 64 not in remaining and len(remaining) == 2  # stale one purged on issue

        later = utcnow() + timedelta(seconds=61)
        with pytest.raises(Exception) as expired:
            on_app(client, lambda db: consume_ticket(db, ticket, now=later))
        assert getattr(expired.value, "code", None) == "unauthorized"
        user = on_app(client, lambda db: consume_ticket(db, ticket))
        assert user.name == "alice"


def test_none_mode_websocket_needs_no_ticket(settings: Settings) -> None:
    with TestClient(_ticket_app(settings)) as client:
        assert client.get("/test/whoami").json() == {"name": "local"}


# --- OIDC with a JWKS served by a local HTTP server --------------------------------------------------------


def _rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def signing_key() -> rsa.RSAPrivateKey:
    return _rsa_key()


@pytest.fixture
def jwks_url(signing_key: rsa.RSAPrivateKey) -> Iterator[str]:
    jwk = json.loads(RSAAlgorithm.to_jwk(signing_key.public_key()))
    jwk.update(kid="test-key", use="sig", alg="RS256")
    document = json.dumps({"keys": [jwk]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(document)))
            self.end_headers()
            self.wfile.write(document)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    finally:
        server.shutdown()
        server.server_close()


def _oidc_token(key: Any, **overrides: Any) -> str:
    claims = {"sub": "oidc-user-1", "iss": ISSUER, "aud": AUDIENCE, "exp": int(time.time()) + 300, "name": "Ada"}
    claims.update(overrides)
    kid = claims.pop("kid", "test-key")
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})


def _oidc_settings(settings: Settings, url: str) -> Settings:
    update = {"auth_mode": "oidc", "oidc_jwks_url": url, "oidc_issuer": ISSUER, "oidc_audience": AUDIENCE}
    return settings.model_copy(update=update)


def test_oidc_accepts_provider_tokens_and_rejects_the_rest(
    settings: Settings, jwks_url: str, signing_key: rsa.RSAPrivateKey
) -> None:
    with TestClient(create_app(_oidc_settings(settings, jwks_url))) as client:

        def me(token: str) -> Any:
            return client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"})

        ok = me(_oidc_token(signing_key))
        assert ok.status_code == 200, ok.text
        assert ok.json()["name"] == "oidc-user-1" and ok.json()["display_name"] == "Ada"
        assert_error(me(_oidc_token(signing_key, aud="someone-else")), 401, "unauthorized")
        assert_error(me(_oidc_token(signing_key, iss="https://evil.test")), 401, "unauthorized")
        assert_error(me(_oidc_token(signing_key, exp=int(time.time()) - 120)), 401, "unauthorized")
        assert_error(me(_oidc_token(_rsa_key())), 401, "unauthorized")  # right kid, wrong key
        assert_error(me(_oidc_token(_rsa_key(), kid="unknown")), 401, "unauthorized")
        hs = jwt.encode({"sub": "x", "iss": ISSUER, "aud": AUDIENCE, "exp": int(time.time()) + 60}, "k" * 32)
        assert_error(me(hs), 401, "unauthorized")
        assert_error(client.get("/api/v1/auth/me"), 401, "unauthorized")


def test_oidc_unreachable_jwks_is_503(settings: Settings, signing_key: rsa.RSAPrivateKey) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with TestClient(create_app(_oidc_settings(settings, f"http://127.0.0.1:{port}/jwks"))) as client:
        response = client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {_oidc_token(signing_key)}"})
        body = assert_error(response, 503, "oidc_unavailable")
        assert "FLEET_OIDC_JWKS_URL" in body["action"]


@pytest.mark.parametrize(
    "sub",
    ["ali\x00ce", "alice\n", "\u202eecila", "zero\u200bwidth", " alice", "", "x" * 256, 42, None],
    ids=["nul", "newline", "bidi", "zero-width", "space", "empty", "long", "int", "null"],
)
def test_a_token_subject_with_control_chars_is_401_and_creates_no_user(settings: Settings, sub: object) -> None:
    from sqlalchemy import func, select

    from fleet_rlm.store.models import User

    async def user_count(db: Any) -> int:
        async with db.session() as s:
            return int((await s.execute(select(func.count()).select_from(User))).scalar_one())

    secured = token_settings(settings)
    token = jwt.encode({"sub": sub, "exp": int(time.time()) + 60}, SECRET, algorithm="HS256")
    with TestClient(create_app(secured)) as client:
        before = on_app(client, user_count)
        response = client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"})
        assert_error(response, 401, "invalid_token_subject" if isinstance(sub, str) else "unauthorized")
        assert on_app(client, user_count) == before
    if isinstance(sub, str):
        with pytest.raises(ValueError):
            mint_token(secured, sub)


def test_a_short_jwt_secret_is_refused(settings: Settings) -> None:
    from pydantic import SecretStr

    from fleet_rlm.config import ConfigError, load_settings

    with pytest.raises(ConfigError) as refused:
        load_settings(_env_file=None, jwt_secret="x")
    assert "at least 32 bytes" in str(refused.value) and "\n" not in str(refused.value)
    assert load_settings(_env_file=None, jwt_secret="k" * 32).jwt_secret is not None
    short = settings.model_copy(update={"auth_mode": "token", "jwt_secret": SecretStr("short")})
    with TestClient(create_app(short)) as client:
        body = assert_error(
            client.get("/api/v1/auth/me", headers={"Authorization": "Bearer x"}), 503, "auth_misconfigured"
        )
        assert "32 bytes" in body["action"]


def test_fleet_web_with_a_short_jwt_secret_exits_with_one_line(tmp_path: Any) -> None:
    from tests.cli.helpers import cli_env, run_cli

    env = cli_env(tmp_path, FLEET_JWT_SECRET="x", FLEET_AUTH_MODE="token")
    refused = run_cli("fleet", ["web", "--port", "9"], env, timeout=60)
    assert refused.returncode == 1
    assert refused.stderr.startswith("error[config_invalid]") and len(refused.stderr.strip().splitlines()) == 1
    assert "FLEET_JWT_SECRET must be at least 32 bytes" in refused.stderr
