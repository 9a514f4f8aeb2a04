"""`fleet-rlm mcp` on stdio, launched by the `mcp` SDK's client as a desktop agent would: it relays to the
CLI's warm local server, runs a task against the HTTP fake LM, and streams progress and the answer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from fleet_rlm.testing import FakeLMServer, adapter_fields_rule
from mcp import Client, StdioServerParameters
from tests.cli.helpers import BIN, cli_env, local_server_pid, stop_local_servers

pytestmark = pytest.mark.db_independent


def test_fleet_rlm_mcp_over_stdio_runs_a_task_with_progress(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with FakeLMServer(rule=adapter_fields_rule(answer="four")) as lm:
        env = cli_env(
            data_dir,
            DSPY_LM_MODEL="openai/fake-model",
            DSPY_LM_API_BASE=lm.base_url,
            DSPY_LLM_API_KEY="fake",
            FLEET_SANDBOX_POOL_SIZE="0",
        )
        params = StdioServerParameters(command=str(BIN / "fleet-rlm"), args=["mcp"], env=env, cwd=str(tmp_path))

        async def scenario() -> dict[str, Any]:
            progress: list[str] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append(message or "")

            async with Client(params, read_timeout_seconds=120) as client:
                first = await client.call_tool(
                    "run_task", {"task": "What is 2+2?", "execution_mode": "direct"}, progress_callback=on_progress
                )
                session_id = first.structured_content["session_id"]
                second = await client.call_tool(
                    "run_task", {"task": "And again?", "execution_mode": "direct", "session_id": session_id}
                )
                history = await client.call_tool("session_history", {"session_id": session_id})
            return {"first": first, "second": second, "progress": progress, "history": history}

        try:
            got = asyncio.run(scenario())
        finally:
            pid = local_server_pid(data_dir)
            stop_local_servers(tmp_path)
    assert pid is not None  # the relay used the warm local server of this data dir
    first = got["first"].structured_content
    assert first["answer"] == "four" and first["status"] == "succeeded"
    assert got["progress"][0].startswith("turn_started") and got["progress"][-1].startswith("turn_finished")
    assert got["second"].structured_content["session_id"] == first["session_id"]
    assert [t["user_message"] for t in got["history"].structured_content["items"]] == ["What is 2+2?", "And again?"]
