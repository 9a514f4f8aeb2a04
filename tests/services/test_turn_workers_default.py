"""Turns run in worker processes by default (one per core, at most 8); FLEET_TURN_PROCESSES sets the number and 0
keeps them in threads of the API process. Checked through the app a server builds."""

from __future__ import annotations

import os

import pytest
from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.runtime.process import ProcessRuntime
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.services.turns.lifecycle import MAX_AUTO_TURN_PROCESSES, turn_worker_count


def test_unset_means_one_per_core(settings: Settings) -> None:
    assert settings.turn_processes is None
    assert turn_worker_count(settings) == max(1, min(os.cpu_count() or 1, MAX_AUTO_TURN_PROCESSES))
    assert turn_worker_count(settings.model_copy(update={"turn_processes": 3})) == 3
    assert turn_worker_count(settings.model_copy(update={"turn_processes": 0})) == 0


def test_env_names_the_number(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> None:
    monkeypatch.setenv("FLEET_TURN_PROCESSES", "0")
    assert Settings(_env_file=None, data_dir=settings.data_dir).turn_processes == 0  # type: ignore[call-arg]


@pytest.mark.parametrize(("value", "kind"), [(None, ProcessRuntime), (0, TurnRuntime)])
def test_the_server_builds_that_runtime(settings: Settings, value: int | None, kind: type) -> None:
    with TestClient(create_app(settings.model_copy(update={"turn_processes": value}))) as client:
        runtime = client.app.state.turns.runtime  # type: ignore[attr-defined]
        assert isinstance(runtime, kind)
        workers = 0 if value == 0 else turn_worker_count(settings)
        assert client.get("/api/v1/runtime/status").json()["turn_workers"] == workers
        if isinstance(runtime, ProcessRuntime):
            assert len(runtime._workers) == turn_worker_count(settings)
