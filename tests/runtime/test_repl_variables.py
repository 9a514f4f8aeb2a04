"""REPL state is visible: after each RLM cell a `repl_variables` event lists the user-visible globals, on the
local sandbox and on Daytona (the in-repo fake server runs the same worker); a hostile __repr__ (sleeps, raises,
huge) is cut off and the turn goes on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from fleet_rlm.config import Settings
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.sandbox.daytona import shutdown_backends
from fleet_rlm.testing import FakeLMServer, rlm_step, rlm_submit
from fleet_rlm.testing.fake_daytona import FakeDaytonaServer
from tests.runtime.conftest import make_request, run

SNAPSHOT = "fleet-rlm-worker"
HOSTILE = """
import time
class Sleepy:
    def __repr__(self):
        time.sleep(30)
        return 'never'
class Broken:
    def __repr__(self):
        raise RuntimeError('no repr for you')
    def __len__(self):
        raise RuntimeError('no len either')
class Huge:
    def __repr__(self):
        return 'h' * 5_000_000
sleepy, broken, huge = Sleepy(), Broken(), Huge()
print('made them')
"""


@pytest.fixture(params=["local", "daytona"])
def any_backend(request: pytest.FixtureRequest, settings: Settings, tmp_path: Path) -> Iterator[Settings]:
    if request.param == "local":
        yield settings
        return
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


def _by_name(event: object) -> dict[str, dict[str, object]]:
    return {v.name: v.model_dump() for v in event.variables}  # type: ignore[attr-defined]


def test_each_cell_reports_the_repl_globals(any_backend: Settings, lm: FakeLMServer) -> None:
    runtime = TurnRuntime(any_backend, lm_provider={"root": lm.dspy_lm()})
    try:
        lm.push(
            rlm_step("Build a list.", 'x = [1, 2, 3]; name = "abc"\nimport json\ndef helper(): pass\n_hidden = 1'),
            rlm_step("Add one.", "y = {'k': x}\nprint(len(x))"),
            rlm_submit(answer="built"),
        )
        result, sink = run(runtime, make_request(any_backend, "build state", session_id="s-vars"))
        assert result.status == "succeeded", result.error
        reports = sink.of("repl_variables")
        assert [r.iteration for r in reports] == [1, 2, 3]  # the SUBMIT cell too
        first = _by_name(reports[0])
        assert first["x"] == {"name": "x", "type": "list", "size": 3, "preview": "[1, 2, 3]", "input": False}
        assert first["name"] == {"name": "name", "type": "str", "size": 3, "preview": "'abc'", "input": False}
        assert not {"json", "helper", "_hidden", "SUBMIT", "llm_query", "llm_query_batched", "print"} & set(first)
        assert not {"WORKSPACE_ROOT", "MEMORY_DIR", "ToolError"} & set(first)
        assert _by_name(reports[1])["y"]["preview"] == "{'k': [1, 2, 3]}"
        kinds = sink.types()
        second_output = max(i for i, kind in enumerate(kinds) if kind == "output")
        assert kinds.index("repl_variables", second_output) > second_output  # after the cell's output
        assert all(r.actor == "root" for r in reports)
    finally:
        runtime.shutdown()


def test_a_hostile_repr_is_cut_off_and_the_turn_goes_on(any_backend: Settings, lm: FakeLMServer) -> None:
    runtime = TurnRuntime(any_backend, lm_provider={"root": lm.dspy_lm()})
    try:
        lm.push(
            rlm_step("Make odd objects.", HOSTILE),
            rlm_step("Keep going.", "print('still here', len(huge.__repr__()))"),
            rlm_submit(answer="survived"),
        )
        result, sink = run(runtime, make_request(any_backend, "be hostile", session_id="s-hostile"))
        assert result.status == "succeeded", result.error
        assert not sink.of("sandbox_reset")
        first = _by_name(sink.of("repl_variables")[0])
        assert first["sleepy"]["preview"] == "<Sleepy: repr timed out>"
        assert first["broken"]["preview"] == "<Broken: repr RuntimeError>" and first["broken"]["size"] is None
        assert first["huge"]["preview"].startswith("hhhh") and len(first["huge"]["preview"]) <= 200
        assert "still here 5000000" in " ".join(event.text for event in sink.of("output"))
    finally:
        runtime.shutdown()
