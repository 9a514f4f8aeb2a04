"""A whole RLM turn on the Daytona backend (real SDK, in-repo fake Daytona server): REPL state across turns
of a session and durable memory on the volume; the model is told it runs in Daytona, and requiring isolation
needs no bubblewrap on the host."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from fleet_rlm.config import Settings
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.sandbox import isolation_level
from fleet_rlm.sandbox.daytona import shutdown_backends
from fleet_rlm.sandbox.status import probe_again
from fleet_rlm.testing import FakeLMServer, rlm_step, rlm_submit, sub_lm_rule
from fleet_rlm.testing.fake_daytona import FakeDaytonaServer
from tests.runtime.conftest import assert_lifecycle, make_request, run

SNAPSHOT = "fleet-rlm-worker"


def _on_fake(settings: Settings, fake: FakeDaytonaServer) -> Settings:
    return settings.model_copy(
        update={
            "sandbox_backend": "daytona",
            "daytona_api_key": SecretStr(fake.api_key),
            "daytona_api_url": fake.api_url,
            "daytona_target": "us",
            "daytona_snapshot": SNAPSHOT,
        }
    )


@pytest.fixture
def daytona_settings(settings: Settings, tmp_path: Path) -> Iterator[Settings]:
    with FakeDaytonaServer(root=tmp_path / "fake-daytona", snapshots=(SNAPSHOT,)) as fake:
        yield _on_fake(settings, fake)
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


@pytest.fixture
def no_host_bubblewrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This host as a Daytona deployment often is: every program on PATH but bwrap (probed again before and
    after)."""
    shadow = tmp_path / "bin-without-bwrap"
    shadow.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        for entry in Path(directory).iterdir() if Path(directory).is_dir() else ():
            target = shadow / entry.name
            if entry.name != "bwrap" and not target.exists():
                target.symlink_to(entry)
    monkeypatch.setenv("PATH", str(shadow))
    probe_again()
    assert isolation_level() == "reduced"
    yield
    monkeypatch.undo()
    probe_again()


@pytest.fixture
def bare_daytona_settings(settings: Settings, tmp_path: Path, no_host_bubblewrap: None) -> Iterator[Settings]:
    """Daytona settings on a fake server whose sandboxes need nothing of this host either (no bwrap)."""
    with FakeDaytonaServer(root=tmp_path / "fake-daytona", snapshots=(SNAPSHOT,), use_bwrap=False) as fake:
        yield _on_fake(settings, fake)
        shutdown_backends()


def test_a_daytona_turn_is_told_it_runs_in_daytona_and_needs_no_host_bubblewrap(
    bare_daytona_settings: Settings, lm: FakeLMServer
) -> None:
    strict = bare_daytona_settings.model_copy(update={"sandbox_require_isolation": True})
    runtime = TurnRuntime(strict, lm_provider={"root": lm.dspy_lm()})
    try:
        assert runtime.pool.backend.name == "daytona"
        lm.push(rlm_step("Where am I?", "print('up', 6 * 7)"), rlm_submit(answer="in daytona"))
        result, sink = run(runtime, make_request(strict, "where do you run?", session_id="s-where"))
        assert result.status == "succeeded", result.error
        assert "up 42" in " ".join(event.text for event in sink.of("output"))
    finally:
        runtime.shutdown()
    action_prompt = str(lm.requests[0].body)
    assert "Daytona cloud sandbox" in action_prompt and "bubblewrap" not in action_prompt


def test_local_turns_still_refuse_without_bubblewrap_when_isolation_is_required(
    settings: Settings, lm: FakeLMServer, no_host_bubblewrap: None
) -> None:
    strict = settings.model_copy(update={"sandbox_require_isolation": True})
    runtime = TurnRuntime(strict, lm_provider={"root": lm.dspy_lm()})
    try:
        lm.push(rlm_step("Try.", "print(1)"), rlm_submit(answer="no"))
        result, sink = run(runtime, make_request(strict, "run code", session_id="s-local"))
        assert result.status == "failed"
        assert [e.code for e in sink.of("error")] == ["sandbox_isolation_unavailable"]
        assert lm.requests == []  # refused before any model call, though the sandbox is leased at the first cell
    finally:
        runtime.shutdown()
