"""A hostile MCP tool answering 200 MB through a real turn: a `fleet-rlm serve-api` process with default settings
(turns in worker processes), the tool an operator stdio server (tests/mcp/hostile_server.py), called by sandbox
code in rlm mode. The code gets a ToolError `mcp_result_too_large`, the turn finishes, and the peak RSS
(VmHWM) of the API process and of each turn worker grows by at most 64 MiB over a warm turn that called the same
server. Run with `-s` to see the numbers (docs/security.md quotes them).

Before the bound, the SDK read the whole answer (a 128 MB result grew the server by ~900 MB) and handed it on.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from fleet_rlm.bench.perf.measure import descendants, peak_rss_mb
from fleet_rlm.bench.perf.server import api_server
from fleet_rlm.testing import FakeLMServer
from tests.helpers import parse_sse
from tests.security.harness import CellScript

pytestmark = pytest.mark.slow
HOSTILE = str(Path(__file__).resolve().parents[1] / "mcp" / "hostile_server.py")
GROWTH_MAX_MB = 64.0
WARM = "print(mcp__big__fine(), len(mcp__big__huge(mb=0.5)['blob']))"
ATTACK = (
    "try:\n    mcp__big__huge(mb=200)\nexcept ToolError as exc:\n    print('refused:', exc)\nprint(mcp__big__fine())\n"
)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def turn_workers(api_pid: int) -> list[int]:
    """The turn workers: the children of the API's fork server (not the sandboxes or MCP servers they start)."""
    servers = [pid for pid in descendants(api_pid) if "forkserver" in _cmdline(pid) and _parent(pid) == api_pid]
    return [pid for pid in descendants(api_pid) if _parent(pid) in servers]


def turn(base: str, session_id: str, content: str) -> list[dict[str, Any]]:
    body = {"content": content, "execution_mode": "rlm"}
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    with httpx.stream(
        "POST", f"{base}/api/v1/sessions/{session_id}/turns", json=body, headers=headers, timeout=300
    ) as response:
        assert response.status_code == 200, response.read()
        return parse_sse("".join(response.iter_text()))


def output(events: list[dict[str, Any]]) -> str:
    return "".join(str(e.get("text", "")) for e in events if e["type"] == "output")


def test_a_200_mb_mcp_result_leaves_the_api_and_the_turn_workers_flat(tmp_path: Path) -> None:
    script = CellScript()
    spec = {"name": "big", "command": sys.executable, "args": [HOSTILE], "tools": ["huge", "fine"], "timeout_s": 120}
    with (
        FakeLMServer(rule=script) as lm,
        api_server(tmp_path / "data", lm.base_url, lm_model=lm.model, mcp_servers=json.dumps([spec])) as server,
    ):
        session_id = httpx.post(f"{server.base_url}/api/v1/sessions", json={"title": "mcp"}).json()["id"]
        warm = turn(server.base_url, session_id, script.register("warm", WARM))
        assert warm[-1]["type"] == "turn_finished" and "fine 500000" in output(warm), warm[-3:]
        workers = turn_workers(server.pid)
        assert workers, "no turn worker found"
        before = {pid: peak_rss_mb(pid) for pid in [server.pid, *workers]}

        events = turn(server.base_url, session_id, script.register("attack", ATTACK))
        after = {pid: peak_rss_mb(pid) for pid in before}

    text = output(events)
    assert events[-1]["type"] == "turn_finished", events[-3:]
    assert "refused: mcp__big__huge failed:" in text and "mcp_result_too_large" in text, text
    assert text.rstrip().endswith("fine"), text  # the session's server answered again
    growth = {pid: after[pid] - before[pid] for pid in before}
    names = {pid: "api" if pid == server.pid else f"worker {pid}" for pid in before}
    for pid in before:
        print(f"{names[pid]}: peak RSS {before[pid]:.1f} -> {after[pid]:.1f} MiB (+{growth[pid]:.1f})")
    assert all(value <= GROWTH_MAX_MB for value in growth.values()), growth
