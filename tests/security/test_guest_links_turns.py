"""End to end: a guest cell plants links in its workspace; later turns and API requests must not follow them.

Through REAL turns (HTTP -> runtime -> dspy.RLM -> sandbox): a cell replaces meta/ by a link to a host
directory, MEMORIES.md by a dangling link to a host path and a workspace file by a link to a host secret. The
next request and the next sandbox spawn run `ensure_roots`; the next turn names the planted file in
`context_paths`. The host must not chmod/chown the directory, create the dangling target, or read the secret,
and the sandbox must still be able to append to its memory (the roots were created by an API request first).
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from fleet_rlm.cli.inprocess import EmbeddedServer
from fleet_rlm.testing import FakeLMServer
from tests.helpers import parse_sse
from tests.security.harness import CellScript, Turn, base_settings, new_session, run_turn

pytestmark = pytest.mark.slow
HOST_SECRET = "host-secret-9b3e-never-read"


@dataclass
class Server:
    http: httpx.Client
    script: CellScript
    settings: Any
    host_dir: Path
    host_secret: Path
    dangling: Path


@pytest.fixture(scope="module")
def server(module_data: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir, database_url = module_data
    host = tmp_path_factory.mktemp("host")
    host.chmod(0o755)
    host_dir = host / "host-dir"
    host_dir.mkdir()
    host_dir.chmod(0o755)
    host_secret = host / "secret.txt"
    host_secret.write_text(HOST_SECRET)
    host_secret.chmod(0o644)  # readable by the host; the guest cannot even see it under bubblewrap
    script = CellScript()
    with FakeLMServer(rule=script) as lm:
        settings = base_settings(
            data_dir,
            database_url,
            lm_model=lm.model,
            lm_api_base=lm.base_url,
            lm_api_key=SecretStr("sk-test"),
            lm_num_retries=0,
            sandbox_pool_size=1,
            sandbox_cell_timeout_s=5.0,
            max_iters=4,
            max_llm_calls=8,
        )
        embedded = EmbeddedServer(settings)
        base_url = embedded.start()
        try:
            with httpx.Client(base_url=base_url, timeout=120) as http:
                yield Server(http, script, settings, host_dir, host_secret, host / "created-by-the-host")
        finally:
            embedded.stop()


def _turn(server: Server, session_id: str, message: str, **extra: Any) -> Turn:
    body = {"content": message, "execution_mode": "rlm", **extra}
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    with server.http.stream("POST", f"/api/v1/sessions/{session_id}/turns", json=body, headers=headers) as response:
        assert response.status_code == 200, response.read()
        turn = Turn(run_id=response.headers["X-Run-Id"])
        turn.events = parse_sse("".join(response.iter_text()))
    return turn


PLANT = """
import os, shutil
ws = WORKSPACE_ROOT
shutil.rmtree(os.path.join(ws, 'meta'))
os.symlink('{host_dir}', os.path.join(ws, 'meta'))
os.remove(os.path.join(MEMORY_DIR, 'MEMORIES.md'))
os.symlink('{dangling}', os.path.join(MEMORY_DIR, 'MEMORIES.md'))
os.symlink('{secret}', os.path.join(MEMORY_DIR, 'doc.txt'))
os.makedirs(os.path.join(MEMORY_DIR, 'docs'))
os.symlink('{secret}', os.path.join(MEMORY_DIR, 'docs', 'inner.txt'))
print('PLANTED')
"""

APPEND = """
with open(os.path.join(MEMORY_DIR, 'MEMORIES.md'), 'a') as handle:
    handle.write('- the sandbox can append\\n')
print('APPENDED', os.path.islink(os.path.join(WORKSPACE_ROOT, 'meta')))
"""


def test_planted_links_are_never_followed_by_the_host(server: Server) -> None:
    before = server.host_dir.stat()
    # the first request creates the workspace roots (before any turn or sandbox exists)
    workspace_id = server.http.get("/api/v1/auth/me").json()["workspace_id"]
    root = server.settings.workspaces_dir / workspace_id
    memories = root / "memory" / "MEMORIES.md"
    assert stat.S_IMODE(memories.stat().st_mode) == 0o660

    values = {"host_dir": server.host_dir, "dangling": server.dangling, "secret": server.host_secret}
    planted = run_turn(server.http, new_session(server.http), server.script.register("plant", PLANT.format(**values)))
    assert planted.terminal["type"] == "turn_finished" and "PLANTED" in planted.output, planted.output

    # the next turn (a new session: a new sandbox spawn) names the planted links as context
    session_id = new_session(server.http)
    refused = _turn(server, session_id, server.script.register("ctx", "print(1)"), context_paths=["memory/doc.txt"])
    assert refused.terminal["type"] == "turn_failed" and refused.terminal["code"] == "context_path_invalid"
    listed = _turn(
        server,
        session_id,
        server.script.register("dir", "print('LEAK' if 'never-read' in context else 'CLEAN')"),
        context_paths=["memory"],
    )
    assert listed.terminal["type"] == "turn_finished" and "CLEAN" in listed.output, listed.output
    appended = run_turn(server.http, session_id, server.script.register("append", "import os\n" + APPEND))
    assert "APPENDED False" in appended.output, appended.output  # a clean meta/ again; memory writable

    for turn in (planted, refused, listed, appended):
        assert HOST_SECRET not in str(turn.events)
    for path in ("memory/doc.txt", "memory/docs/inner.txt", "meta/x"):
        response = server.http.get("/api/v1/runtime/volume/file", params={"path": path})
        assert response.status_code in (400, 404) and HOST_SECRET not in response.text, response.text
    after = server.host_dir.stat()
    assert (after.st_mode, after.st_uid, after.st_gid) == (before.st_mode, before.st_uid, before.st_gid)
    assert list(server.host_dir.iterdir()) == [] and not server.dangling.exists()
    assert server.host_secret.read_text() == HOST_SECRET
    assert "the sandbox can append" in memories.read_text() and not memories.is_symlink()
    assert stat.S_IMODE(memories.stat().st_mode) == 0o660
    if os.geteuid() == 0:
        assert stat.S_IMODE((root / "meta").stat().st_mode) == 0o2770
    assert [p.name.split(".displaced-")[0] for p in root.iterdir() if ".displaced-" in p.name] == ["meta"]
