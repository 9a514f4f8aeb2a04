"""GEPA end to end on the fake LM: the reflection model teaches the student, the score goes up."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from fleet_rlm.config import Settings
from fleet_rlm.llm import build_lm, resolve_profiles
from fleet_rlm.optimize.gepa_run import GEPAConfig, run_gepa
from fleet_rlm.optimize.modules import BuildContext, get_module
from fleet_rlm.optimize.progress import OptimizationProgress, ProgressTracker
from fleet_rlm.testing import FakeLMServer
from tests.optimize.fakes import TAUGHT, direct_rows, router_rows, teaching_lm


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with teaching_lm() as server:
        yield server


def context(settings: Settings, lm: FakeLMServer) -> BuildContext:
    configured = settings.model_copy(
        update={"lm_model": lm.model, "lm_api_base": lm.base_url, "lm_api_key": SecretStr("fake")}
    )
    profiles = resolve_profiles(configured)
    return BuildContext(settings=configured, lms=lambda role: build_lm(profiles[role], settings=configured))  # type: ignore[index]


def test_router_gepa_learns_from_reflection(settings: Settings, lm: FakeLMServer) -> None:
    seen: list[OptimizationProgress] = []
    outcome = run_gepa(
        get_module("router"),
        context(settings, lm),
        train=router_rows(6),
        val=router_rows(3),
        config=GEPAConfig(max_metric_calls=15),  # seed on val (3) + one iteration (3 x 3 minibatch + 3 val)
        tracker=ProgressTracker(seen.append),
    )
    assert outcome.status == "succeeded"
    assert outcome.baseline_score < 1.0
    assert outcome.optimized_score == 1.0
    assert TAUGHT in outcome.instructions_after["program.predict"]
    assert TAUGHT not in outcome.instructions_before["program.predict"]
    assert outcome.metric_calls > 0 and outcome.state
    phases = [p.phase for p in seen]
    assert phases[0] == "baseline" and "optimizing" in phases and phases[-1] == "validating"
    assert any(p.metric_calls > 0 for p in seen) and any(p.best_score == 1.0 for p in seen)


def test_direct_gepa_on_chain_of_thought(settings: Settings, lm: FakeLMServer) -> None:
    outcome = run_gepa(
        get_module("direct"),
        context(settings, lm),
        train=direct_rows(4),
        val=direct_rows(2),
        config=GEPAConfig(max_metric_calls=13),  # seed on val (2) + one iteration (3 x 3 minibatch + 2 val)
    )
    assert outcome.optimized_score == 1.0 and outcome.baseline_score == 0.0
    assert list(outcome.instructions_after) == ["program.predict.predict"]


def test_cancel_before_optimizing_keeps_the_baseline(settings: Settings, lm: FakeLMServer) -> None:
    cancel = threading.Event()
    cancel.set()
    outcome = run_gepa(
        get_module("router"),
        context(settings, lm),
        train=router_rows(3),
        val=router_rows(2),
        config=GEPAConfig(max_metric_calls=4),
        cancel=cancel,
    )
    assert outcome.status == "cancelled" and outcome.optimized == []
    assert all(r.error == "cancelled" for r in outcome.baseline)


def _student_calls(lm: FakeLMServer) -> int:
    """Program runs that reached the fake LM (GEPA's reflection prompts excluded)."""
    return sum("`new_instruction`" not in r.system_text for r in lm.requests)


@pytest.mark.parametrize("budget", [15, 12, 4])
def test_max_metric_calls_is_a_ceiling(settings: Settings, lm: FakeLMServer, budget: int) -> None:
    val = router_rows(3)
    outcome = run_gepa(
        get_module("router"),
        context(settings, lm),
        train=router_rows(6),
        val=val,
        config=GEPAConfig(max_metric_calls=budget),
    )
    assert outcome.status == "succeeded"
    gepa_runs = _student_calls(lm) - 2 * len(val)  # minus our own baseline and final validation
    assert 0 < gepa_runs <= budget, f"{gepa_runs} program runs for a budget of {budget}"
    assert 0 < outcome.metric_calls <= budget
    if budget < 15:  # not enough for a whole iteration: GEPA stops after scoring the seed, nothing half-scored
        assert outcome.iterations == 0 and outcome.optimized_score == outcome.baseline_score
