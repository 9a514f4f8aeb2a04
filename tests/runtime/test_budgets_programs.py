"""Wall-clock budget, and program versions from a registry."""

from __future__ import annotations

from fleet_rlm.config import Settings
from fleet_rlm.runtime.programs import DIRECT, ProgramSpec
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.testing.fake_lm_dspy import dspy_fields, rlm_step
from fleet_rlm.testing.fake_lm_server import FakeLMServer
from tests.runtime.conftest import assert_lifecycle, make_request, run


def test_turn_timeout_interrupts_and_returns_partial(
    runtime: TurnRuntime, settings: Settings, lm: FakeLMServer
) -> None:
    lm.push(rlm_step("Take forever.", "import time\nprint('started')\ntime.sleep(60)"))
    result, sink = run(runtime, make_request(settings, "slow", turn_timeout_s=1.5))
    assert result.status == "succeeded" and result.fields["budget_exhausted"] == "turn_timeout_s"
    assert "Take forever." in result.answer
    (exhausted,) = sink.of("budget_exhausted")
    assert exhausted.budget == "turn_timeout_s" and exhausted.limit == 1.5
    assert (result.outcome, result.stop_reason) == ("partial", "turn_timeout_s")
    (finished,) = sink.of("turn_finished")
    assert (finished.outcome, finished.stop_reason) == ("partial", "turn_timeout_s")
    assert_lifecycle(sink, "turn_finished")


class Registry:
    def __init__(self) -> None:
        self.asked: list[tuple[str, str | None]] = []

    def get(self, module: str, version: str | None = None) -> ProgramSpec | None:
        self.asked.append((module, version))
        if module == DIRECT and version == "v7":
            return ProgramSpec(DIRECT, "v7", "Answer like a pirate.")
        return None


def test_program_version_from_registry(settings: Settings, lm: FakeLMServer) -> None:
    registry = Registry()
    runtime = TurnRuntime(settings, lm_provider={"root": lm.dspy_lm()}, programs=registry)
    try:
        lm.push(dspy_fields(reasoning="arr", answer="Ahoy"))
        request = make_request(settings, "hello", mode="direct")
        request.program_versions[DIRECT] = "v7"
        result, _ = run(runtime, request)
    finally:
        runtime.shutdown()
    assert result.answer == "Ahoy" and result.program_version == "v7"
    assert (result.outcome, result.stop_reason) == ("complete", None)
    assert (DIRECT, "v7") in registry.asked
    assert "Answer like a pirate." in lm.requests[0].system_text
