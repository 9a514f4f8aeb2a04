"""dspy.RLM end to end on the Daytona backend (fake Daytona server + fake LM server): sub-LM calls travel
from guest code to the host over the session-command channel."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dspy
import pytest

from fleet_rlm.sandbox.daytona import DaytonaBackend
from fleet_rlm.sandbox.factory import interpreter_factory
from fleet_rlm.testing.fake_daytona import FakeDaytonaServer
from fleet_rlm.testing.fake_lm_dspy import rlm_step
from fleet_rlm.testing.fake_lm_rules import sub_lm_rule
from fleet_rlm.testing.fake_lm_server import FakeLMServer


@pytest.fixture
def fake_lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(rule=sub_lm_rule(lambda prompt: f"summary of {len(prompt)} chars")) as server:
        yield server


def test_rlm_runs_on_daytona(
    fake_lm: FakeLMServer, fake_daytona: FakeDaytonaServer, daytona_backend: DaytonaBackend, tmp_path: Path
) -> None:
    fake_lm.push(
        rlm_step("Look at the data.", "import os\nprint(len(context), context[:5], os.getcwd())"),
        rlm_step(
            "Ask sub-LMs.", "note = llm_query('describe: ' + context[:20])\nprint(llm_query_batched(['a', 'bb']))"
        ),
        rlm_step("Submit.", "SUBMIT(answer=note, length=len(context))"),
    )
    factory = interpreter_factory(daytona_backend, data_dir=tmp_path, session_id="sess-1")
    rlm = dspy.RLM("context -> answer: str, length: int", max_iters=5, interpreter_factory=factory)
    with dspy.context(lm=fake_lm.dspy_lm()):
        result = rlm(context="hello world " * 1000)
    assert result.answer == "summary of 30 chars" and result.length == 12000
    outputs = [step["output"] for step in result.trajectory]
    assert outputs[0] == "12000 hello /workspace"
    assert outputs[1] == "['summary of 1 chars', 'summary of 2 chars']"
    assert "Daytona" in str(fake_lm.requests[0].body)
    # The session's sandbox is labelled for reuse and kept (auto-stop reclaims it), the worker is gone.
    records = list(fake_daytona.state.sandboxes.values())
    assert [r.labels["session"] for r in records] == ["sess-1"]
    assert daytona_backend.status()["workers"] == 0 and daytona_backend.sandbox_ids() == {records[0].id: True}
