"""Promotion never takes a version that is not strictly better on the run's validation rows without a
confirmation: both scores are shown (GET .../promotion), POST .../promote refuses with promotion_not_better and
both scores, confirm=true promotes; a later run scores its baseline with the version then in effect. A finished
run's progress says finished, with the metric calls it made."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from fleet_rlm.testing import FakeLMServer
from tests.api.isolation import assert_error
from tests.api.test_optimization import API, start_run, upload, wait_run
from tests.helpers import new_session, run_turn
from tests.optimize.fakes import direct_rows, stubborn_lm


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with stubborn_lm() as server:
        yield server


def turn_version(client: TestClient, session_id: str, key: str) -> str:
    body = {"content": "what is 3 squared? [answer=9]", "execution_mode": "direct"}
    run_id, _ = run_turn(client, session_id, body, key)
    return str(client.get(f"/api/v1/runs/{run_id}").json()["program_version"])


def test_a_version_that_is_not_better_needs_confirmation(client: TestClient) -> None:
    dataset_id = upload(client, direct_rows(8))
    run = wait_run(client, start_run(client, dataset_id, max_metric_calls=20))
    assert run["status"] == "succeeded" and run["program_version"] == "direct-v1", run
    assert run["scores"]["baseline"] == run["scores"]["optimized"] == 0.0
    assert run["progress"]["phase"] == "done" and run["progress"]["finished"] is True
    assert run["progress"]["metric_calls"] == run["scores"]["metric_calls"] <= 20

    check = client.get(f"{API}/runs/{run['id']}/promotion").json()
    assert check == {
        "module": "direct",
        "candidate_version": "direct-v1",
        "candidate_score": 0.0,
        "current_version": "builtin-1",
        "current_score": 0.0,
        "rows": run["config"]["val_size"],
        "better": False,
        "already_current": False,
    }
    refused = client.post(f"{API}/runs/{run['id']}/promote")
    error = assert_error(refused, 409, "promotion_not_better")
    assert error["details"]["candidate_score"] == 0.0 and error["details"]["current_version"] == "builtin-1"
    assert "direct-v1 scored 0.000" in error["message"] and "builtin-1 (0.000)" in error["message"]
    session_id = new_session(client)
    assert turn_version(client, session_id, "t1") == "builtin-1", "a refused promotion changes nothing"

    promoted = client.post(f"{API}/runs/{run['id']}/promote", params={"confirm": "true"})
    assert promoted.status_code == 200 and promoted.json()["promoted"], promoted.text
    assert turn_version(client, session_id, "t2") == "direct-v1"

    second = wait_run(client, start_run(client, dataset_id, max_metric_calls=20))
    assert second["config"]["baseline_version"] == "direct-v1", "the baseline is the version in effect"
    again = client.get(f"{API}/runs/{second['id']}/promotion").json()
    assert (again["current_version"], again["current_score"], again["better"]) == ("direct-v1", 0.0, False)
    assert_error(client.post(f"{API}/runs/{second['id']}/promote"), 409, "promotion_not_better")
    assert client.post(f"{API}/runs/{run['id']}/promote").status_code == 200, "re-promoting the current one is a no-op"
