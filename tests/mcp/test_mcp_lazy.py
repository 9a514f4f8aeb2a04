"""`/mcp` loads the `mcp` SDK on its first authenticated request, not at server start, and then works as always.

A fresh interpreter starts the real app the way a server's entry point does (collector paused for the start)
and reports what it has imported at each step: behaviour (which modules, the collector's state), never timing.
"""

from __future__ import annotations

import json
import subprocess
import sys

from pydantic import SecretStr

from fleet_rlm.api.auth import mint_token
from fleet_rlm.config import Settings
from tests.cli.helpers import cli_env

SECRET = "test-signing-key-with-enough-entropy-0123456789"

PROBE = """
import gc, json, sys
from concurrent.futures import ThreadPoolExecutor

import httpx

from fleet_rlm.api import startup_gc
from fleet_rlm.cli.inprocess import embedded_server
from fleet_rlm.config import Settings

startup_gc.pause()  # as the local server, `serve-api` and `fleet web` do
settings = Settings(_env_file=None)  # from the FLEET_ environment the test sets
token = sys.argv[1]
report = {}

def sdk_loaded():
    prefixes = ("mcp.", "fleet_rlm.mcp_server.", "fleet_rlm.api.mcp_endpoint")
    return sorted(name for name in sys.modules if name in ("mcp", "fleet_rlm.mcp_server") or name.startswith(prefixes))

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ACCEPT = "application/json, text/event-stream"

with embedded_server(settings) as url:
    report["gc_after_start"] = [gc.isenabled(), gc.get_freeze_count() > 0]
    report["health"] = httpx.get(f"{url}/health").status_code
    report["after_start"] = sdk_loaded()
    anonymous = httpx.post(f"{url}/mcp", json=INIT, headers={"Accept": ACCEPT})
    report["anonymous"] = [anonymous.status_code, anonymous.json()["error"]["code"]]
    report["after_anonymous"] = sdk_loaded()
    auth = {"Authorization": f"Bearer {token}", "Accept": ACCEPT}

    def initialize(_):
        response = httpx.post(f"{url}/mcp", json=INIT, headers=auth, timeout=120)
        return response.status_code, response.headers.get("mcp-session-id"), response.text

    with ThreadPoolExecutor(4) as pool:  # several first requests at once share one start
        opened = list(pool.map(initialize, range(4)))
    report["opened"] = [[status, bool(session)] for status, session, _ in opened]
    report["sessions"] = len({session for _, session, _ in opened})
    report["server_name"] = [json.loads(line[5:])["result"]["serverInfo"]["name"]
                             for line in opened[0][2].splitlines() if line.startswith("data:")]
    session = opened[0][1]
    headers = {**auth, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
    httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    listed = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers)
    report["tools"] = sorted(tool["name"] for line in listed.text.splitlines() if line.startswith("data:")
                             for tool in json.loads(line[5:])["result"]["tools"])
    report["after_mcp"] = sdk_loaded()
print("REPORT=" + json.dumps(report))
"""


def test_mcp_loads_on_first_use_and_serves_concurrent_first_requests(settings: Settings) -> None:
    token = mint_token(settings.model_copy(update={"auth_mode": "token", "jwt_secret": SecretStr(SECRET)}), "alice")
    env = cli_env(
        settings.data_dir,
        FLEET_DATABASE_URL=settings.resolved_database_url,
        FLEET_AUTH_MODE="token",
        FLEET_JWT_SECRET=SECRET,
        FLEET_SANDBOX_POOL_SIZE="0",
    )
    done = subprocess.run([sys.executable, "-c", PROBE, token], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    # the server stopped with MCP sessions still open: the lifespan closed them without an error
    assert "Traceback" not in done.stderr and "shutdown failed" not in done.stderr, done.stderr[-3000:]
    report = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("REPORT="))[7:])
    assert report["gc_after_start"] == [True, True]  # the paused collector is back on, the startup heap frozen
    assert report["health"] == 200
    assert report["after_start"] == []  # a started, serving app has not imported the SDK
    assert report["anonymous"] == [401, "unauthorized"] and report["after_anonymous"] == []
    assert report["opened"] == [[200, True]] * 4 and report["sessions"] == 4
    assert report["server_name"] == ["fleet-rlm"]
    assert {"run_task", "list_sessions", "session_history", "run_events", "cancel_run"} <= set(report["tools"])
    assert "mcp" in report["after_mcp"] and "fleet_rlm.mcp_server.server" in report["after_mcp"]
