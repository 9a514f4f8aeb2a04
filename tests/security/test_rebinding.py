"""Egress is pinned to the address that was checked: a DNS answer rebound to loopback after the SSRF check
reaches nothing.

Each test points a user-chosen URL at `localhost:<victim port>` while the attacker's name server
(`tests/security/rebinding.py`) answers "public" to the check and loopback after. Before the fix the HTTP
clients (and git) resolved the name a second time through the system resolver, which says 127.0.0.1, and the
victim got the request (with the caller's key for an LM). Now every connection goes to an address that was
checked at that moment: the victim accepts no connection. Real servers, real git, the HTTP fake LM.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.llm.roles import ROLES
from fleet_rlm.runtime.context.fetch import fetch_url
from fleet_rlm.runtime.context.repo import clone_repo
from fleet_rlm.testing import FakeLMServer
from tests.api.isolation import bearer, token_settings
from tests.helpers import new_session, run_turn
from tests.security.rebinding import LOOPBACK, PUBLIC, Listener, Rebinding

PROFILES = "/api/v1/llm-profiles"


@pytest.fixture
def victim() -> Iterator[Listener]:
    with Listener() as listener:
        yield listener


@pytest.fixture
def operator_lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(default="OK", model="openai/operator-model") as server:
        yield server


def strict(settings: Settings, lm: FakeLMServer, **extra: Any) -> Settings:
    """Token mode (user endpoints must be public); the operator's own LM is the fake one on loopback."""
    return token_settings(
        settings,
        lm_model=lm.model,
        lm_api_base=lm.base_url,
        lm_api_key=SecretStr("sk-operator-0123456789"),
        sandbox_pool_size=0,
        lm_num_retries=0,
        lm_timeout_s=10,
        turn_processes=0,  # turns in this process, where the test's name server is installed
        **extra,
    )


def test_context_url_connects_to_the_checked_address(victim: Listener) -> None:
    with Rebinding(public_answers=1).installed() as dns, pytest.raises(FleetError) as failed:
        fetch_url(victim.url("http", "/page"), allow_private=False, max_bytes=1000, timeout_s=5)
    assert victim.accepted == 0
    assert failed.value.code == "context_url_failed", "the checked (public) address was tried, and refused"
    assert dns.lookups == [("localhost", PUBLIC)], "one lookup: the connection used its answer"


def test_repository_clone_is_pinned_to_the_checked_address(victim: Listener, tmp_path: Path) -> None:
    with Rebinding(public_answers=1).installed() as dns, pytest.raises(FleetError) as failed:
        clone_repo(
            victim.url("https", "/x.git"),
            None,
            context_dir=tmp_path,
            allow_private=False,
            timeout_s=20,
            max_bytes=10_000_000,
        )
    assert victim.accepted == 0
    assert failed.value.code == "context_repo_failed"
    assert dns.lookups == [("localhost", PUBLIC)], "git never resolved the name itself"


def test_lm_profile_test_and_model_list_are_pinned(
    settings: Settings, operator_lm: FakeLMServer, victim: Listener
) -> None:
    configured = strict(settings, operator_lm)
    with Rebinding(public_answers=10**6).installed() as dns, TestClient(create_app(configured)) as client:
        alice = bearer(configured, "alice")
        body = {"name": "mine", "model": "openai/m", "api_base": victim.url("http", "/v1"), "api_key": "sk-al-1234567"}
        created = client.post(PROFILES, json=body, headers=alice)
        assert created.status_code == 201, created.text
        profile = created.json()["id"]

        dns.answer_public(1)  # the check at use sees a public host; the connection would see loopback
        tested = client.post(f"{PROFILES}/{profile}/test", headers=alice)
        assert tested.status_code == 200 and tested.json()["ok"] is False
        assert tested.json()["error_code"] == "lm_unreachable"

        dns.answer_public(1)
        models = client.get(f"{PROFILES}/{profile}/models", headers=alice)
        assert models.status_code >= 400 and "sk-al" not in models.text
    assert victim.accepted == 0, "nothing reached loopback with alice's key"
    assert (("localhost", LOOPBACK)) in dns.lookups, "the connection resolved (and refused) the rebound answer"


def test_lm_turn_is_pinned(settings: Settings, operator_lm: FakeLMServer, victim: Listener) -> None:
    configured = strict(settings, operator_lm)
    with Rebinding(public_answers=10**6).installed() as dns, TestClient(create_app(configured)) as client:
        alice = bearer(configured, "alice")
        body = {"name": "mine", "model": "openai/m", "api_base": victim.url("http", "/v1"), "api_key": "sk-al-1234567"}
        profile = client.post(PROFILES, json=body, headers=alice).json()["id"]
        bound = client.patch("/api/v1/llm-roles", json={"root": {"profile_id": profile}}, headers=alice)
        assert bound.is_success, bound.text
        session = new_session(client, headers=alice)
        before = len(dns.lookups)
        dns.answer_public(len(ROLES))  # the turn checks each role's profile: all see a public host...
        _, events = run_turn(client, session, {"content": "hi", "execution_mode": "direct"}, "k1", headers=alice)
    assert victim.accepted == 0, "nothing reached loopback with alice's key"
    assert events[-1]["type"] == "turn_failed", events[-3:]
    assert events[-1]["code"] == "lm_unreachable", "every check passed; the connection itself was refused"
    assert dns.lookups[before:][-1] == ("localhost", LOOPBACK), "...the connection's own lookup sees loopback"


def test_mcp_server_url_is_pinned(settings: Settings, operator_lm: FakeLMServer, victim: Listener) -> None:
    configured = strict(settings, operator_lm)
    with Rebinding(public_answers=10**6).installed() as dns, TestClient(create_app(configured)) as client:
        alice = bearer(configured, "alice")
        server = {"name": "mine", "url": victim.url("http", "/mcp"), "tools": ["*"]}
        created = client.post("/api/v1/mcp-servers", json=server, headers=alice)
        assert created.status_code == 201, created.text
        session = new_session(client, headers=alice)
        before = len(dns.lookups)
        dns.answer_public(1)  # the check before the connection sees a public host, the connection loopback
        _, events = run_turn(client, session, {"content": "hi", "execution_mode": "tools"}, "k1", headers=alice)
    assert victim.accepted == 0
    warnings = [e for e in events if e["type"] == "warning" and e.get("code") == "mcp_server_unavailable"]
    assert warnings and "mcp_url_blocked" in warnings[0]["message"], events
    assert dns.lookups[before:] == [("localhost", PUBLIC), ("localhost", LOOPBACK)], "the check, then the connection"
