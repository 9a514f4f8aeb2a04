"""Document bombs against a real `fleet-rlm serve-api` process: refused with `document_too_large`, and the
server's peak RSS (VmHWM in /proc/<pid>/status) stays flat, at upload time and at turn time.

Issue 13 item 8: a 1.5 MB DOCX inflating to 1.5 GB took the server from 462 MB to 3.4 GB RSS. Here a 5 MB DOCX
inflating to 1 GiB, an archive of 10,001 entries and archives nested three deep are refused at upload from the
zip directory alone; the same bomb fetched from a URL at turn time fails the turn and not the session; a DOCX
that passes every zip check but whose XML needs more than the converter's memory limit fails the turn too,
in the converter process. Afterwards an ordinary DOCX still converts in the same session.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from fleet_rlm.testing import FakeLMServer
from tests.helpers import parse_sse
from tests.runtime.context.factories import make_docx
from tests.runtime.docsafe import bombs
from tests.security.harness import CellScript

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent
MB = 1024 * 1024
SERVER_GROWTH_MAX = 200 * MB
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


class _Files(BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}

    def do_GET(self) -> None:
        body = self.files.get(self.path, b"")
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", DOCX)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        pass


class Server:
    def __init__(self, http: httpx.Client, process: subprocess.Popen[bytes], files_base: str, data_dir: Path) -> None:
        self.http, self.process, self.files_base, self.data_dir = http, process, files_base, data_dir

    def upload(self, name: str, data: bytes) -> httpx.Response:
        return self.http.post("/api/v1/attachments", files={"file": (name, data, DOCX)})

    def turn(self, session_id: str, attachment_ids: list[str]) -> list[dict[str, Any]]:
        body = {"content": "summarise the attachment", "execution_mode": "direct", "attachment_ids": attachment_ids}
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        with self.http.stream(
            "POST", f"/api/v1/sessions/{session_id}/turns", json=body, headers=headers, timeout=180
        ) as response:
            assert response.status_code == 200, response.read()
            return parse_sse("".join(response.iter_text()))


@pytest.fixture(scope="module")
def bomb_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    root = tmp_path_factory.mktemp("bombs")
    return {
        "bomb": bombs.docx_bomb(root / "bomb.docx").read_bytes(),
        "many": bombs.many_entries(root / "many.xlsx", 10_001).read_bytes(),
        "nested": bombs.nested(root / "nested.docx", depth=3).read_bytes(),
        "dense": bombs.docx_dense(root / "dense.docx", 40 * MB).read_bytes(),
    }


@pytest.fixture(scope="module")
def server(
    module_data: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory, bomb_files: dict[str, bytes]
) -> Iterator[Server]:
    data_dir, database_url = module_data
    _Files.files = {"/bomb.docx": bomb_files["bomb"]}
    files = ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    threading.Thread(target=files.serve_forever, daemon=True).start()
    log = tmp_path_factory.mktemp("log") / "server.log"
    port = _free_port()
    with FakeLMServer(rule=CellScript()) as lm, log.open("ab") as handle:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEET_", "DSPY_", "OPENAI_"))}
        env.update(
            FLEET_DATABASE_URL=database_url,
            FLEET_DATA_DIR=str(data_dir),
            FLEET_SANDBOX_POOL_SIZE="0",
            FLEET_LM_NUM_RETRIES="0",
            FLEET_URL_ALLOW_PRIVATE="true",
            FLEET_DOCUMENT_CONVERT_MEMORY_MB="256",  # the dense DOCX passes the zip checks, not this
            DSPY_LM_MODEL=lm.model,
            DSPY_LM_API_BASE=lm.base_url,
            DSPY_LLM_API_KEY="sk-test",
        )
        process = subprocess.Popen(
            [str(BIN / "fleet-rlm"), "serve-api", "--port", str(port)], env=env, stdout=handle, stderr=subprocess.STDOUT
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 120
            while True:
                assert process.poll() is None and time.monotonic() < deadline, log.read_text()
                try:
                    if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            with httpx.Client(base_url=base, timeout=60) as http:
                yield Server(http, process, f"http://127.0.0.1:{files.server_address[1]}", data_dir)
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
            files.shutdown()


def _refused(response: httpx.Response, limit: str) -> None:
    assert response.status_code == 413, response.text
    error = response.json()["error"]
    assert error["code"] == "document_too_large" and error["details"]["limit"] == limit, error
    assert error["action"] and "\n" not in error["message"]


def test_bombs_are_refused_at_upload_and_the_server_rss_stays_flat(
    server: Server, bomb_files: dict[str, bytes]
) -> None:
    assert server.upload("warmup.docx", make_docx()).status_code == 201
    baseline = server_peak_rss(server.process.pid)
    _refused(server.upload("report.docx", bomb_files["bomb"]), "max_uncompressed_bytes")
    _refused(server.upload("sheet.xlsx", bomb_files["many"]), "max_entries")
    _refused(server.upload("nested.docx", bomb_files["nested"]), "max_nesting")
    stored = [path for path in (server.data_dir / "attachments").rglob("*") if path.is_file()]
    assert len(stored) == 1, f"a refused upload left a file: {stored}"  # only the warm-up DOCX
    assert server_peak_rss(server.process.pid) - baseline < SERVER_GROWTH_MAX


def test_bombs_at_turn_time_fail_the_turn_not_the_session_and_not_the_server(
    server: Server, bomb_files: dict[str, bytes]
) -> None:
    session_id = server.http.post("/api/v1/sessions", json={"title": "bombs"}).json()["id"]
    dense = server.upload("dense.docx", bomb_files["dense"])
    assert dense.status_code == 201, dense.text  # within every zip limit: only conversion can tell
    url = server.http.post("/api/v1/attachments", json={"url": f"{server.files_base}/bomb.docx"})
    assert url.status_code == 201, url.text
    ordinary = server.upload("ordinary.docx", make_docx()).json()["id"]
    server.turn(session_id, [ordinary])  # the converter process is warm; its memory is not the server's
    baseline = server_peak_rss(server.process.pid)

    for attachment_id, setting in (
        (url.json()["id"], "FLEET_DOCUMENT_MAX_UNCOMPRESSED_MB"),
        (dense.json()["id"], "FLEET_DOCUMENT_CONVERT_MEMORY_MB"),
    ):
        events = server.turn(session_id, [attachment_id])
        failed = events[-1]
        assert failed["type"] == "turn_failed" and failed["code"] == "document_too_large", failed
        assert setting in failed["message"] and failed["action"], failed

    events = server.turn(session_id, [ordinary])
    assert events[-1]["type"] == "turn_finished", events[-3:]
    loaded = [event for event in events if event["type"] == "context_loaded"]
    assert loaded and loaded[0]["chars"] > 0
    assert server_peak_rss(server.process.pid) - baseline < SERVER_GROWTH_MAX
