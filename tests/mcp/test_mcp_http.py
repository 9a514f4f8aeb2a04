"""fleet-rlm's MCP server at /mcp over streamable HTTP, driven by the `mcp` SDK's client against a real server
(uvicorn on loopback) and the HTTP fake LM: auth like the API, a task with progress and its answer, the other
tools, resources, and errors carrying the API's stable codes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import SecretStr

from fleet_rlm.api.auth import mint_token
from fleet_rlm.cli.inprocess import embedded_server
from fleet_rlm.config import Settings
from fleet_rlm.testing import FakeLMServer, adapter_fields_rule, sub_lm_rule
from mcp import Client

SECRET = "test-signing-key-with-enough-entropy-0123456789"


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(rules=[sub_lm_rule("sub answer"), adapter_fields_rule(answer="forty-two")]) as server:
        yield server


@pytest.fixture
def secured(settings: Settings, lm: FakeLMServer) -> Settings:
    return settings.model_copy(
        update={
            "lm_model": lm.model,
            "lm_api_base": lm.base_url,
            "lm_api_key": SecretStr("fake"),
            "sandbox_pool_size": 0,
            "auth_mode": "token",
            "jwt_secret": SecretStr(SECRET),
        }
    )


@pytest.fixture
def base_url(secured: Settings) -> Iterator[str]:
    with embedded_server(secured) as url:
        yield url


def connect(base_url: str, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=120.0))
    return Client(streamable_http_client(f"{base_url}/mcp", http_client=http))


def test_run_task_over_http_streams_progress_and_returns_the_answer(base_url: str, secured: Settings) -> None:
    token = mint_token(secured, "alice")

    async def scenario() -> dict[str, Any]:
        progress: list[tuple[float, str | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, message))

        async with connect(base_url, token) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            result = await client.call_tool(
                "run_task",
                {"task": "What is six times seven?", "execution_mode": "direct"},
                progress_callback=on_progress,
            )
            out = result.structured_content or {}
            sessions = await client.call_tool("list_sessions", {})
            history = await client.call_tool("session_history", {"session_id": out["session_id"]})
            events = await client.call_tool("run_events", {"run_id": out["run_id"]})
            resource = await client.read_resource(f"fleet://sessions/{out['session_id']}")
        return {
            "names": names,
            "result": result,
            "progress": progress,
            "sessions": sessions.structured_content,
            "history": history.structured_content,
            "events": events.structured_content,
            "resource": resource,
        }

    got = asyncio.run(scenario())
    assert {"run_task", "list_sessions", "session_history", "run_events", "cancel_run"} <= got["names"]
    result = got["result"]
    assert not result.is_error, result
    assert result.structured_content["answer"] == "forty-two"
    assert result.structured_content["status"] == "succeeded"
    assert result.structured_content["outcome"] == "complete" and result.structured_content["stop_reason"] is None
    messages = [message or "" for _, message in got["progress"]]
    assert messages[0].startswith("turn_started") and messages[-1].startswith("turn_finished")
    assert any(m.startswith("final: forty-two") for m in messages)
    values = [value for value, _ in got["progress"]]
    assert values == sorted(values) and len(values) == len(set(values))
    assert [s["id"] for s in got["sessions"]["items"]] == [result.structured_content["session_id"]]
    turns = got["history"]["items"]
    assert turns[0]["user_message"] == "What is six times seven?" and turns[0]["answer"] == "forty-two"
    kinds = [e["type"] for e in got["events"]["items"]]
    assert kinds[0] == "turn_started" and kinds[-1] == "turn_finished" and got["events"]["status"] == "succeeded"
    body = json.loads(got["resource"].contents[0].text)
    assert body["turns"][0]["answer"] == "forty-two"


def test_mcp_needs_the_api_token_and_isolates_users(base_url: str, secured: Settings) -> None:
    response = httpx2.post(
        f"{base_url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Accept": "application/json"}
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert response.headers["www-authenticate"].startswith("Bearer")
    alice, bob = mint_token(secured, "alice"), mint_token(secured, "bob")
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    auth = {"Authorization": f"Bearer {alice}", "Accept": "application/json, text/event-stream"}
    cross_site = httpx2.post(f"{base_url}/mcp", json=ping, headers={**auth, "Origin": "https://evil.example"})
    assert cross_site.status_code == 403 and cross_site.json()["error"]["code"] == "origin_not_allowed"
    rebound = httpx2.post(f"{base_url}/mcp", json=ping, headers={**auth, "Host": "evil.example"})
    assert rebound.status_code == 421 and rebound.json()["error"]["code"] == "host_not_allowed"

    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    opened = httpx2.post(f"{base_url}/mcp", json=init, headers=auth)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    as_bob = {**auth, "Authorization": f"Bearer {bob}", "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
    hijack = httpx2.post(f"{base_url}/mcp", json={**ping, "id": 2}, headers=as_bob)
    assert hijack.status_code == 404  # alice's MCP session does not exist for bob's token

    async def scenario() -> tuple[Any, MCPError, MCPError]:
        async with connect(base_url, alice) as client:
            done = await client.call_tool("run_task", {"task": "hello", "execution_mode": "direct"})
        run_id = done.structured_content["run_id"]
        async with connect(base_url, bob) as client:
            with pytest.raises(MCPError) as foreign:
                await client.call_tool("run_events", {"run_id": run_id})
            with pytest.raises(MCPError) as empty:
                await client.call_tool("run_task", {"task": "   "})
            mine = await client.call_tool("list_sessions", {})
        return mine, foreign.value, empty.value

    mine, foreign, empty = asyncio.run(scenario())
    assert mine.structured_content["items"] == []
    assert foreign.data["code"] == "not_found" and foreign.code == -32002
    assert empty.data["code"] == "empty_task"


def test_cancel_run_stops_a_running_task(base_url: str, secured: Settings, lm: FakeLMServer) -> None:
    lm.latency_s = 20.0  # the model call hangs until the run is cancelled
    token = mint_token(secured, "carol")

    async def scenario() -> tuple[MCPError, Any]:
        started = asyncio.Event()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            started.set()

        async with connect(base_url, token) as runner, connect(base_url, token) as other:
            call = asyncio.create_task(
                runner.call_tool(
                    "run_task", {"task": "slow one", "execution_mode": "direct"}, progress_callback=on_progress
                )
            )
            await asyncio.wait_for(started.wait(), 60)
            sessions = (await other.call_tool("list_sessions", {})).structured_content
            run_id = sessions["items"][0]["last_run_id"]
            state = await other.call_tool("cancel_run", {"run_id": run_id})
            with pytest.raises(MCPError) as ended:
                await asyncio.wait_for(call, 60)
        return ended.value, state

    ended, state = asyncio.run(scenario())
    assert state.structured_content["cancel_requested"] is True
    assert ended.data["code"] == "run_cancelled" and ended.data["details"]["run_id"]
