"""Optimization over HTTP on the fake LM: datasets (upload, row errors, from feedback), a GEPA run with live
progress, results, report, compare, cancel, promotion changing the program new turns run, and rollback."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.optimize.datasets import to_jsonl
from fleet_rlm.testing import FakeLMServer
from tests.helpers import fake_lm_settings, new_session, run_turn
from tests.optimize.fakes import TAUGHT, direct_rows, teaching_lm

API = "/api/v1/optimization"


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with teaching_lm() as server:
        yield server


def upload(client: TestClient, rows: list[dict[str, Any]], name: str = "squares", module: str = "direct") -> str:
    body = {"module": module, "name": name, "content": to_jsonl(rows), "filename": f"{name}.jsonl"}
    response = client.post(f"{API}/datasets", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def wait_run(client: TestClient, run_id: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = client.get(f"{API}/runs/{run_id}").json()
        if run["status"] not in ("queued", "running"):
            return dict(run)
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not finish")


def start_run(client: TestClient, dataset_id: str, **budget: Any) -> str:
    body = {"module": "direct", "dataset_id": dataset_id, **(budget or {"max_metric_calls": 16})}
    response = client.post(f"{API}/runs", json=body)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def test_modules_are_listed_with_keys_and_metric(client: TestClient) -> None:
    modules = {m["name"]: m for m in client.get(f"{API}/modules").json()}
    assert {"rlm", "router", "direct", "summarize_document", "extract_from_logs", "cited_answer"} <= set(modules)
    assert modules["router"]["required_keys"] == ["task", "mode"]
    assert modules["rlm"]["targets"] == {"program.generate_action": "rlm.action", "program.extract": "rlm.extract"}
    assert modules["cited_answer"]["metric"] == "cited_answer"


def test_upload_reports_every_bad_row(client: TestClient) -> None:
    content = '{"task": "a", "answer": "1"}\nnot json\n{"task": "b"}\n{"task": "c", "answer": ""}\n'
    body = {"module": "direct", "name": "bad", "content": content, "filename": "bad.jsonl"}
    response = client.post(f"{API}/datasets", json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "dataset_invalid" and "line 2" in error["message"]
    csv_body = {"module": "router", "name": "r", "content": "task,mode\nhi,direct\nbye\n", "filename": "r.csv"}
    errors = client.post(f"{API}/datasets", json=csv_body).json()["error"]["details"]["errors"]
    assert errors == [{"line": 2, "message": "empty value for: mode"}]
    csv_ok = {"module": "router", "name": "r", "content": "task,mode\nhi,direct\nbig job,rlm\n", "filename": "r.csv"}
    created = client.post(f"{API}/datasets", json=csv_ok)
    assert created.status_code == 201 and created.json()["row_count"] == 2
    assert client.post(f"{API}/datasets", json=csv_ok).json()["error"]["code"] == "dataset_exists"
    detail = client.get(f"{API}/datasets/{created.json()['id']}").json()
    assert detail["rows"] == [{"task": "hi", "mode": "direct"}, {"task": "big job", "mode": "rlm"}]
    assert [d["name"] for d in client.get(f"{API}/datasets").json()] == ["r"]


def test_run_promote_changes_what_new_turns_run_then_rollback(client: TestClient, lm: FakeLMServer) -> None:
    dataset_id = upload(client, direct_rows(6))
    session_id = new_session(client)
    before_id, events = run_turn(
        client, session_id, {"content": "what is 7 squared? [answer=49]", "execution_mode": "direct"}, "t1"
    )
    assert next(e for e in events if e["type"] == "final")["answer"] == "wrong answer"
    assert client.get(f"/api/v1/runs/{before_id}").json()["program_version"] == "builtin-1"

    run_id = start_run(client, dataset_id)
    run = wait_run(client, run_id)
    assert run["status"] == "succeeded", run
    assert run["program_version"] == "direct-v1"
    assert run["scores"]["baseline"] == 0.0 and run["scores"]["optimized"] == 1.0
    assert run["progress"]["phase"] == "done" and run["progress"]["metric_calls"] > 0
    results = client.get(f"{API}/runs/{run_id}/results").json()
    assert len(results["examples"]) == run["config"]["val_size"] == 2
    assert all(e["optimized"]["score"] == 1.0 for e in results["examples"])
    assert TAUGHT in results["instructions_after"]["program.predict.predict"]
    assert "## Prompt changes" in results["report_markdown"] and "+" + TAUGHT in results["report_markdown"]
    with client.stream("GET", f"{API}/runs/{run_id}/stream") as response:
        frames = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
    assert frames[-1]["type"] == "finished" and frames[-1]["run"]["status"] == "succeeded"

    version = client.post(f"{API}/runs/{run_id}/promote").json()
    assert version["promoted"] and version["manifest"]["dataset"]["rows"] == 6
    assert version["manifest"]["dspy_version"] and version["manifest"]["scores"]["optimized"] == 1.0
    after_id, events = run_turn(
        client, session_id, {"content": "what is 8 squared? [answer=64]", "execution_mode": "direct"}, "t2"
    )
    assert next(e for e in events if e["type"] == "final")["answer"] == "64"
    assert client.get(f"/api/v1/runs/{after_id}").json()["program_version"] == "direct-v1"

    rolled = client.post(f"{API}/modules/direct/rollback").json()
    assert rolled == {"module": "direct", "scope": "user", "promoted": None}
    back_id, _ = run_turn(client, session_id, {"content": "hi", "execution_mode": "direct"}, "t3")
    assert client.get(f"/api/v1/runs/{back_id}").json()["program_version"] == "builtin-1"

    second = wait_run(client, start_run(client, dataset_id, max_metric_calls=4))
    compared = client.get(f"{API}/runs/compare", params={"a": run_id, "b": second["id"]}).json()
    assert compared["same_module"] and len(compared["examples"]) == 2
    assert compared["delta"] == second["scores"]["optimized"] - 1.0
    assert [v["version"] for v in client.get(f"{API}/versions").json()] == ["direct-v2", "direct-v1"]


def test_dataset_from_feedback(client: TestClient) -> None:
    session_id = new_session(client)
    up, _ = run_turn(client, session_id, {"content": "q1", "execution_mode": "direct"}, "f1")
    down, _ = run_turn(client, session_id, {"content": "q2", "execution_mode": "direct"}, "f2")
    skipped, _ = run_turn(client, session_id, {"content": "q3", "execution_mode": "direct"}, "f3")
    for run_id, rating, expected in ((up, "up", None), (down, "down", "the right answer"), (skipped, "down", None)):
        body = {"run_id": run_id, "rating": rating, "expected_answer": expected}
        assert client.post("/api/v1/traces/feedback", json=body).status_code == 201
    made = client.post(f"{API}/datasets/from-feedback", json={"module": "direct", "name": "fb"})
    assert made.status_code == 201, made.text
    rows = made.json()["rows"]
    assert [(r["task"], r["answer"]) for r in rows] == [("q1", "wrong answer"), ("q2", "the right answer")]
    assert made.json()["skipped"] == {"thumbs-down without an expected answer": 1}
    none = client.post(f"{API}/datasets/from-feedback", json={"module": "cited_answer", "name": "x"})
    assert none.json()["error"]["code"] == "dataset_no_feedback"
    # rated runs picked one by one (the datasets page's selection) become the rows, and an optimization runs on them
    body = {"module": "direct", "name": "picked", "run_ids": [down, skipped]}
    picked = client.post(f"{API}/datasets/from-feedback", json=body)
    assert picked.status_code == 201, picked.text
    assert [(r["task"], r["answer"]) for r in picked.json()["rows"]] == [("q2", "the right answer")]
    assert client.put(f"/api/v1/traces/feedback/{skipped}", json={"rating": "up"}).status_code == 200
    body = {"module": "direct", "name": "picked-2", "run_ids": [down, skipped]}
    picked = client.post(f"{API}/datasets/from-feedback", json=body).json()
    assert [(r["task"], r["answer"]) for r in picked["rows"]] == [("q2", "the right answer"), ("q3", "wrong answer")]
    run = wait_run(client, start_run(client, picked["id"], max_metric_calls=4))
    assert run["status"] == "succeeded", run


def test_cancel_stops_the_run(settings: Settings) -> None:
    with teaching_lm() as slow:
        slow.latency_s = 0.3
        with TestClient(create_app(fake_lm_settings(settings, slow))) as client:
            dataset_id = upload(client, direct_rows(10))
            run_id = start_run(client, dataset_id, auto="light")
            cancelled = client.post(f"{API}/runs/{run_id}/cancel").json()
            assert cancelled["cancel_requested_at"] is not None
            run = wait_run(client, run_id)
    assert run["status"] == "cancelled" and run["program_version"] is None
