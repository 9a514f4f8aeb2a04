"""Real turns: a document attached in one session is invisible to every other session of the same workspace
(local sandbox with pool spares, and Daytona against the fake server), while its own session's cells and
nested children read it at CONTEXT_DIR."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from fleet_rlm.config import Settings
from fleet_rlm.runtime.contracts import ContextSource
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.sandbox.daytona import shutdown_backends
from fleet_rlm.testing import FakeLMServer, rlm_step, rlm_submit
from fleet_rlm.testing.fake_daytona import FakeDaytonaServer
from tests.runtime.conftest import make_request, run

SCAN = (
    "import json, os\nhits = []\n"
    "for top in (CONTEXT_DIR, WORKSPACE_ROOT):\n"
    "    for current, _dirs, files in os.walk(top):\n"
    "        for name in files:\n"
    "            try:\n"
    "                if 'FILE-A-SECRET' in open(os.path.join(current, name), errors='replace').read():\n"
    "                    hits.append(name)\n"
    "            except OSError:\n"
    "                pass\n"
    "print(json.dumps(sorted(hits)))"
)


@pytest.fixture(params=["local", "daytona"])
def turn_settings(request: pytest.FixtureRequest, settings: Settings, tmp_path: Path) -> Iterator[Settings]:
    if request.param == "local":
        yield settings.model_copy(update={"sandbox_pool_size": 1})  # spares start before any session
        return
    with FakeDaytonaServer(root=tmp_path / "fake-daytona", snapshots=("fleet-rlm-worker",)) as fake:
        yield settings.model_copy(
            update={
                "sandbox_backend": "daytona",
                "daytona_api_key": SecretStr(fake.api_key),
                "daytona_api_url": fake.api_url,
                "daytona_target": "us",
                "daytona_snapshot": "fleet-rlm-worker",
            }
        )
        shutdown_backends()


def _scan(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer, session: str, **kwargs: object) -> list[str]:
    lm.push(rlm_step("Look for it.", SCAN), rlm_submit(answer="looked"))
    result, sink = run(runtime, make_request(settings, "find file A", session_id=session, **kwargs))  # type: ignore[arg-type]
    assert result.status == "succeeded", result
    return json.loads(sink.of("output")[0].text)


def test_a_document_of_one_session_is_invisible_to_another(turn_settings: Settings, lm: FakeLMServer) -> None:
    runtime = TurnRuntime(turn_settings, lm_provider={"root": lm.dspy_lm()})
    try:
        attached = (ContextSource(kind="text", name="file-a", text="FILE-A-SECRET: the value is 41"),)
        assert len(_scan(runtime, turn_settings, lm, "sess-a", sources=attached)) == 1
        assert _scan(runtime, turn_settings, lm, "sess-b") == []
        assert len(_scan(runtime, turn_settings, lm, "sess-a")) == 1  # later turns of A still see it
    finally:
        runtime.shutdown()
    workspace = turn_settings.workspaces_dir / "w1"
    assert not (workspace / "buffers" / "context").exists()
