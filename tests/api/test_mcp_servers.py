"""Users' MCP servers over the API: who may configure stdio commands and which URLs (token mode), secrets
write-only and encrypted at rest, per-user isolation, and a user's server used by their turn in tools mode."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlmodel import select

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.mcp_servers import McpServerSpec
from fleet_rlm.store.models import McpServer
from fleet_rlm.testing import FakeLMServer
from fleet_rlm.testing.fake_lm_dspy import dspy_fields
from tests.helpers import final_answer, run_turn

from .isolation import assert_error, bearer, new_session, on_app, token_settings

SERVER = str(Path(__file__).resolve().parents[1] / "mcp" / "tool_server.py")
STDIO = {"name": "kit", "command": sys.executable, "args": [SERVER], "tools": ["echo"], "env": {"TOKEN": "s3cret"}}


def test_token_mode_rules_secrets_and_isolation(settings: Settings) -> None:
    operator = McpServerSpec(name="docs", url="https://docs.example/mcp", tools=["search"])
    secured = token_settings(settings, admin_users="root", mcp_servers=[operator])
    with TestClient(create_app(secured)) as client:
        alice, root, bob = (bearer(secured, name) for name in ("alice", "root", "bob"))
        body = assert_error(client.post("/api/v1/mcp-servers", json=STDIO, headers=alice), 403, "admin_required")
        assert "stdio" in body["message"]
        local = {"name": "mine", "url": "http://127.0.0.1:9/mcp", "tools": ["*"]}
        assert_error(client.post("/api/v1/mcp-servers", json=local, headers=alice), 403, "mcp_url_blocked")
        shadow = {**STDIO, "name": "docs"}
        assert_error(client.post("/api/v1/mcp-servers", json=shadow, headers=root), 409, "mcp_server_exists")
        both = {**STDIO, "url": "https://docs.example/mcp"}
        assert_error(client.post("/api/v1/mcp-servers", json=both, headers=root), 422, "mcp_server_invalid")

        created = client.post("/api/v1/mcp-servers", json=STDIO, headers=root)
        assert created.status_code == 201, created.text
        out = created.json()
        assert out["transport"] == "stdio" and out["env_names"] == ["TOKEN"] and "s3cret" not in created.text
        assert_error(client.post("/api/v1/mcp-servers", json=STDIO, headers=root), 409, "mcp_server_exists")

        listed = client.get("/api/v1/mcp-servers", headers=root).json()
        assert [(i["name"], i["owner"]) for i in listed["items"]] == [("kit", "user"), ("docs", "operator")]
        assert listed["can_add_stdio"] is True and "s3cret" not in str(listed)
        assert client.get("/api/v1/mcp-servers", headers=alice).json()["can_add_stdio"] is False
        assert [i["owner"] for i in client.get("/api/v1/mcp-servers", headers=bob).json()["items"]] == ["operator"]
        assert_error(client.delete(f"/api/v1/mcp-servers/{out['id']}", headers=bob), 404, "not_found")

        patched = client.patch(f"/api/v1/mcp-servers/{out['id']}", json={"tools": ["echo", "add"]}, headers=root)
        assert patched.status_code == 200 and patched.json()["tools"] == ["echo", "add"]
        assert patched.json()["env_names"] == ["TOKEN"]  # secrets kept when not sent

        async def stored(db: Any) -> list[McpServer]:
            async with db.session() as s:
                return list((await s.execute(select(McpServer))).scalars())

        (row,) = on_app(client, stored)
        assert row.secrets_encrypted and "s3cret" not in row.secrets_encrypted
        assert client.delete(f"/api/v1/mcp-servers/{out['id']}", headers=root).status_code == 204


def test_a_users_server_serves_their_tools_mode_turn(settings: Settings) -> None:
    with FakeLMServer() as lm:
        configured = settings.model_copy(
            update={
                "lm_model": lm.model,
                "lm_api_base": lm.base_url,
                "lm_api_key": SecretStr("fake"),
                "sandbox_pool_size": 0,
            }
        )
        lm.push(
            dspy_fields(next_thought="Echo.", next_tool_name="mcp__kit__echo", next_tool_args={"text": "mine"}),
            dspy_fields(next_thought="Done.", next_tool_name="finish", next_tool_args={}),
            dspy_fields(reasoning="echoed", answer="echo:mine"),
        )
        with TestClient(create_app(configured)) as client:
            assert client.post("/api/v1/mcp-servers", json=STDIO).status_code == 201  # auth none: the operator
            session_id = new_session(client, {})
            _, events = run_turn(client, session_id, {"content": "echo mine", "execution_mode": "tools"}, "k1")
    assert final_answer(events) == "echo:mine"
    calls = [e for e in events if e["type"] in ("tool_call", "tool_result")]
    assert [(e["type"], e["name"]) for e in calls] == [
        ("tool_call", "mcp__kit__echo"),
        ("tool_result", "mcp__kit__echo"),
    ]
    assert calls[1]["ok"] and calls[1]["result_preview"] == "echo:mine"


def test_names_that_would_make_tool_names_ambiguous_are_refused(settings: Settings) -> None:
    """Tools are `mcp__<server>__<tool>`: a server name with `__` or a trailing `_`, or allowed tools that
    differ only in punctuation, would give two tools one name; the POST says so with a stable code."""
    with TestClient(create_app(settings)) as client:
        for name in ("gh__enterprise", "gh_"):
            body = assert_error(
                client.post("/api/v1/mcp-servers", json={**STDIO, "name": name}), 422, "mcp_name_collision"
            )
            assert "'__'" in body["message"] and body["action"]
        twins = {**STDIO, "tools": ["list-repos", "list.repos"]}
        body = assert_error(client.post("/api/v1/mcp-servers", json=twins), 422, "mcp_name_collision")
        assert "mcp__kit__list_repos" in body["message"]
        for name in ("rlm", "llm", "gh", "gh_enterprise"):  # their tools cannot meet a built-in or each other
            created = client.post("/api/v1/mcp-servers", json={**STDIO, "name": name, "tools": ["query"]})
            assert created.status_code == 201, created.text
