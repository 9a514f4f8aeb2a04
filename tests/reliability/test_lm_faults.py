"""The LM provider misbehaves (429, 500, hangs): retries with backoff, then a turn_failed with a stable code.

One server for the module; each test scripts the fake provider's next answers. After every failure the same
session still runs a normal turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.api.app import create_app
from fleet_rlm.testing import FakeLMServer, FakeResponse, adapter_fields_rule
from tests.security.harness import base_settings, new_session, run_turn

RETRIES = 2


@dataclass
class App:
    client: TestClient
    lm: FakeLMServer
    failure: FakeResponse | None = None
    failures_left: int = -1  # -1: every call fails while `failure` is set


@pytest.fixture(scope="module")
def app(module_data: tuple[Path, str]) -> Iterator[App]:
    data_dir, database_url = module_data
    auto = adapter_fields_rule(answer="fine")
    state: dict[str, App] = {}

    def rule(request: Any) -> Any:
        app = state["app"]
        if app.failure is None or app.failures_left == 0:
            return auto(request)
        app.failures_left -= 1 if app.failures_left > 0 else 0
        return app.failure

    with FakeLMServer(rule=rule) as lm:
        settings = base_settings(
            data_dir,
            database_url,
            lm_model=lm.model,
            lm_api_base=lm.base_url,
            lm_api_key=SecretStr("fake"),
            lm_num_retries=RETRIES,
            lm_timeout_s=2.0,
            sandbox_pool_size=0,
        )
        with TestClient(create_app(settings)) as client:
            state["app"] = App(client, lm)
            yield state["app"]


def _fail_with(app: App, response: FakeResponse, code: str) -> None:
    session_id = new_session(app.client)
    app.lm.clear()
    app.failure = response
    try:
        turn = run_turn(app.client, session_id, "hello", mode="direct")
    finally:
        app.failure = None
    assert turn.terminal["type"] == "turn_failed", turn.types
    assert turn.terminal["code"] == code, turn.terminal
    assert turn.terminal["message"] and turn.terminal["action"]
    assert len(app.lm.requests) >= RETRIES + 1, "a failing call must be retried lm_num_retries times"
    errors = turn.of("error")
    assert errors and errors[-1]["code"] == code
    run = app.client.get(f"/api/v1/runs/{turn.run_id}").json()
    assert run["status"] == "failed" and run["error"]["code"] == code
    healthy = run_turn(app.client, session_id, "and now?", mode="direct")
    assert healthy.terminal["type"] == "turn_finished", healthy.types
    assert healthy.of("final")[0]["answer"] == "fine"


def test_rate_limited_provider_retries_then_fails_clearly(app: App) -> None:
    _fail_with(app, FakeResponse.rate_limited(retry_after=0.1), "lm_rate_limited")


def test_provider_500_retries_then_fails_clearly(app: App) -> None:
    _fail_with(app, FakeResponse.server_error(500), "lm_server_error")


def test_hanging_provider_times_out_then_fails_clearly(app: App) -> None:
    _fail_with(app, FakeResponse.hanging(hang_s=10), "lm_timeout")


def test_one_transient_429_is_absorbed_by_a_retry(app: App) -> None:
    session_id = new_session(app.client)
    app.lm.clear()
    app.failure, app.failures_left = FakeResponse.rate_limited(retry_after=0.1), 1
    try:
        turn = run_turn(app.client, session_id, "hello", mode="direct")
    finally:
        app.failure, app.failures_left = None, -1
    assert turn.terminal["type"] == "turn_finished", turn.types
    assert len(app.lm.requests) == 2
