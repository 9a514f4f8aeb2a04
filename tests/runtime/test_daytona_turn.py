"""A whole RLM turn on the Daytona backend (real SDK, in-repo fake Daytona server): REPL state across turns
of a session and durable memory on the volume."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from fleet_rlm.config import Settings
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.sandbox.daytona import shutdown_backends
from fleet_rlm.testing import FakeLMServer, rlm_step, rlm_submit, sub_lm_rule
from fleet_rlm.testing.fake_daytona import FakeDaytonaServer
from tests.runtime.conftest import assert_lifecycle, make_request, run

SNAPSHOT = "fleet-rlm-worker"


@pytest.fixture
def daytona_settings(settings: Settings, tmp_path: Path) -> Iterator[Settings]:
    with FakeDaytonaServer(root=tmp_path / "fake-daytona", snapshots=(SNAPSHOT,)) as fake:
        yield settings.model_copy(
            update={
                "sandbox_backend": "daytona",
                "daytona_api_key": SecretStr(fake.api_key),
                "daytona_api_url": fake.api_url,
                "daytona_target": "us",
                "daytona_snapshot": SNAPSHOT,
            }
        )
        shutdown_backends()


def test_rlm_turns_run_in_daytona_sandboxes(daytona_settings: Settings, lm: FakeLMServer) -> None:
    runtime = TurnRuntime(daytona_settings, lm_provider={"root": lm.dspy_lm()})
    try:
        lm.add_rule(sub_lm_rule("child says hi"))
        lm.push(
            rlm_step(
                "Remember something and check where I am.",
                "remembered = 41 + 1\n"
                "open(WORKSPACE_ROOT + '/memory/MEMORIES.md', 'a').write('- the answer is 42\\n')\n"
                "print('cwd', __import__('os').getcwd())",
            ),
            rlm_submit(answer="stored"),
        )
        first, sink = run(runtime, make_request(daytona_settings, "store it", session_id="s-day"))
        assert first.status == "succeeded", first.error
        assert_lifecycle(sink, "turn_finished")
        outputs = " ".join(event.text for event in sink.of("output"))
        assert "cwd /workspace" in outputs

        lm.push(
            rlm_step(
                "Use what the REPL and memory kept.",
                "print('state', remembered)\nprint(open(WORKSPACE_ROOT + '/memory/MEMORIES.md').read())",
            ),
            rlm_submit(answer="recalled"),
        )
        second, sink = run(runtime, make_request(daytona_settings, "recall it", session_id="s-day"))
        assert second.status == "succeeded", second.error
        outputs = " ".join(event.text for event in sink.of("output"))
        assert "state 42" in outputs and "the answer is 42" in outputs
    finally:
        runtime.shutdown()
