"""Record and replay over HTTP: an rlm turn with a sub-LM batch and a child, made with a keyed profile, is
recorded with the run; with the fake LM server stopped it replays as identical, and with another program version
reports the first divergent request; regression sets replay together; no key or auth header is stored or shown."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import text

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.store import Database
from fleet_rlm.store.repos import programs as programs_repo
from fleet_rlm.store.repos import recordings as recordings_repo
from fleet_rlm.testing import FakeLMServer, rlm_step, rlm_submit, sub_lm_rule
from tests.helpers import final_answer, run_turn
from tests.runtime.test_recursion import child_rule

PROFILE_KEY = "sk-profile-SECRET-0123456789abcdef"
ENV_KEY = "sk-env-SECRET-fedcba9876543210"
FORBIDDEN = (PROFILE_KEY, ENV_KEY, "Authorization", "Bearer", "api_key", "api_base")


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer() as server:
        server.add_rule(child_rule(grandchild=False))
        server.add_rule(sub_lm_rule(lambda prompt: f"echo:{prompt[-5:]}"))
        yield server


@pytest.fixture
def app_settings(settings: Settings, lm: FakeLMServer) -> Settings:
    return settings.model_copy(
        update={
            "lm_model": lm.model,
            "lm_api_base": lm.base_url,
            "lm_api_key": SecretStr(ENV_KEY),
            "sandbox_pool_size": 0,
            "allow_private_lm_bases": True,
            "lm_num_retries": 0,
            "max_iters": 6,
        }
    )


def record_run(client: TestClient, lm: FakeLMServer) -> str:
    profile = client.post(
        "/api/v1/llm-profiles",
        json={"name": "keyed", "model": lm.model, "api_base": lm.base_url, "api_key": PROFILE_KEY},
    )
    assert profile.status_code == 201, profile.text
    bound = client.patch("/api/v1/llm-roles", json={"root": {"profile_id": profile.json()["id"]}})
    assert bound.status_code == 200, bound.text
    lm.push(
        rlm_step("Ask sub-LMs.", "res = llm_query_batched(['one', 'two', 'three'])\nprint(res)"),
        rlm_step("Delegate.", "kids = rlm_query_batched(['child task 0', 'child task 1'])\nprint(kids)"),
        rlm_submit(answer="done"),
    )
    session_id = client.post("/api/v1/sessions", json={"title": "replay"}).json()["id"]
    body = {"content": "record me", "execution_mode": "rlm", "batch_concurrency": 3}
    run_id, events = run_turn(client, session_id, body, "k1")
    assert final_answer(events) == "done"
    assert len([e for e in events if e["type"] == "sub_lm_start"]) == 3
    assert len([e for e in events if e["type"] == "child_start"]) == 2
    assert any(r.headers.get("authorization") == f"Bearer {PROFILE_KEY}" for r in lm.requests)  # the key was used
    return run_id


def rows(settings: Settings) -> list[str]:
    async def dump() -> list[str]:
        database = Database(str(settings.database_url))
        try:
            async with database.session() as session:
                out: list[str] = []
                for table in ("run_recordings", "lm_recordings", "lm_blobs"):
                    result = await session.execute(text(f"SELECT * FROM {table}"))
                    out.extend(f"{table}: {tuple(row)}" for row in result)
                return out
        finally:
            await database.dispose()

    return asyncio.run(dump())


def add_version(settings: Settings, user_id: str) -> str:
    async def add() -> None:
        database = Database(str(settings.database_url))
        try:
            async with database.transaction() as session:
                await programs_repo.add_version(
                    session,
                    user_id=user_id,
                    module="rlm.task",
                    version="rlm.task-v9",
                    program={"runtime": {"rlm.task": "Solve the task. Be terse."}},
                    manifest={},
                )
        finally:
            await database.dispose()

    asyncio.run(add())
    return "rlm.task-v9"


def test_record_then_replay_offline(client: TestClient, app_settings: Settings, lm: FakeLMServer) -> None:
    run_id = record_run(client, lm)
    calls = len(lm.requests)
    stored = rows(app_settings)
    assert sum(r.startswith("lm_recordings") for r in stored) == calls
    for row in stored:
        for word in FORBIDDEN:
            assert word not in row, (word, row[:300])
    shown = client.get(f"/api/v1/runs/{run_id}/recording", params={"bodies": True})
    assert shown.status_code == 200, shown.text
    recording = shown.json()
    assert recording["calls"] == calls and [e["seq"] for e in recording["exchanges"]] == list(range(1, calls + 1))
    assert {e["role"] for e in recording["exchanges"]} == {"root", "sub", "delegate"}
    assert recording["exchanges"][0]["request"]["messages"][0]["role"] == "system"
    assert not any(word in shown.text for word in FORBIDDEN)
    lm.stop()  # from here on no model answers

    replayed = client.post(f"/api/v1/runs/{run_id}/replay")
    assert replayed.status_code == 200, replayed.text
    report: dict[str, Any] = replayed.json()
    assert report["result"] == "identical", report["divergence"]
    assert report["calls_recorded"] == report["calls_replayed"] == calls
    assert report["answer_replayed"] == report["answer_recorded"] == "done"
    assert not any(word in replayed.text for word in FORBIDDEN[:2])

    owner = add_version(app_settings, _owner(app_settings, run_id))
    changed = client.post(f"/api/v1/runs/{run_id}/replay", json={"program_version": owner}).json()
    assert changed["result"] == "diverged" and changed["program_versions"]["rlm.task"] == "rlm.task-v9"
    divergence = changed["divergence"]
    assert divergence["reason"] == "unrecorded_request" and divergence["role"] == "root"
    assert divergence["index"] == 1 and divergence["recorded_seq"] == 1
    assert any(line.startswith("+") and "Be terse." in line for line in divergence["diff"].splitlines())

    saved = client.put("/api/v1/replay-sets/smoke", json={"run_ids": [run_id]})
    assert saved.status_code == 200 and saved.json()["run_ids"] == [run_id]
    assert [s["name"] for s in client.get("/api/v1/replay-sets").json()["items"]] == ["smoke"]
    together = client.post("/api/v1/replay-sets/smoke/replay").json()
    assert together["identical"] is True and together["reports"][0]["result"] == "identical"
    assert client.post("/api/v1/replay-sets/smoke/replay", json={"program_version": owner}).json()["identical"] is False


def _owner(settings: Settings, run_id: str) -> str:
    async def find() -> str:
        database = Database(str(settings.database_url))
        try:
            async with database.session() as session:
                result = await session.execute(text("SELECT user_id FROM runs WHERE id = :id"), {"id": run_id})
                return str(result.scalar_one())
        finally:
            await database.dispose()

    return asyncio.run(find())


def test_replay_errors_are_stable(client: TestClient) -> None:
    missing = client.post("/api/v1/runs/nope/replay")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "run_not_found"
    unknown_set = client.post("/api/v1/replay-sets/none/replay")
    assert unknown_set.status_code == 404 and unknown_set.json()["error"]["code"] == "replay_set_not_found"
    bad = client.put("/api/v1/replay-sets/smoke", json={"run_ids": ["nope"]})
    assert bad.status_code == 404 and bad.json()["error"]["code"] == "run_not_found"


def test_workspace_file_context_is_staged_for_the_replay(
    client: TestClient, app_settings: Settings, lm: FakeLMServer
) -> None:
    from fleet_rlm.testing import adapter_fields_rule

    lm.add_rule(adapter_fields_rule(answer="the notes say hello"))
    session_id = client.post("/api/v1/sessions", json={"title": "paths"}).json()["id"]
    run_turn(client, session_id, {"content": "warm up", "execution_mode": "direct"}, "w1")
    (workspace,) = [p for p in app_settings.workspaces_dir.iterdir() if p.is_dir()]
    (workspace / "notes.txt").write_text("hello from the workspace\n")
    body = {"content": "what do my notes say?", "execution_mode": "direct", "context_paths": ["notes.txt"]}
    run_id, events = run_turn(client, session_id, body, "p1")
    assert final_answer(events) == "the notes say hello"
    assert "hello from the workspace" in lm.requests[-1].text
    lm.stop()
    report = client.post(f"/api/v1/runs/{run_id}/replay").json()
    assert report["result"] == "identical", report
    assert sorted(p.name for p in app_settings.workspaces_dir.iterdir()) == [workspace.name]  # scratch removed
    (workspace / "notes.txt").write_text("edited since\n")
    edited = client.post(f"/api/v1/runs/{run_id}/replay").json()
    assert edited["result"] == "diverged" and "+edited since" in edited["divergence"]["diff"]


def test_replay_on_a_server_whose_turns_run_in_worker_processes(app_settings: Settings, lm: FakeLMServer) -> None:
    """FLEET_TURN_PROCESSES=1: the turn runs (and is recorded) in a worker; its replay runs in a worker too (its
    recorded responses cross as data: tests/runtime/test_replay_runtime.py) and is identical."""
    with TestClient(create_app(app_settings.model_copy(update={"turn_processes": 1}))) as client:
        run_id = record_run(client, lm)
        lm.stop()
        replayed = client.post(f"/api/v1/runs/{run_id}/replay")
        assert replayed.status_code == 200, replayed.text
        report = replayed.json()
        assert report["result"] == "identical", report["divergence"]
        assert report["answer_replayed"] == "done"


def _edit_inputs(settings: Settings, run_id: str, edit: Any) -> None:
    async def write() -> None:
        database = Database(str(settings.database_url))
        try:
            async with database.transaction() as session:
                row = await recordings_repo.get_recording(session, run_id=run_id)
                assert row is not None
                await recordings_repo.save_inputs(session, run_id=run_id, inputs=edit(dict(row.inputs)))
        finally:
            await database.dispose()

    asyncio.run(write())


def test_a_recording_whose_inputs_do_not_validate_is_refused(
    client: TestClient, app_settings: Settings, lm: FakeLMServer
) -> None:
    """What the old scrubber left of a recording (a key replaced by `[REDACTED]`), a path that climbs out of the
    workspace, a task that is missing: `422 recording_invalid` naming the field, and nothing runs."""
    from fleet_rlm.testing import adapter_fields_rule

    lm.add_rule(adapter_fields_rule(answer="fine"))
    session_id = client.post("/api/v1/sessions", json={"title": "invalid"}).json()["id"]
    run_id, events = run_turn(client, session_id, {"content": "hello", "execution_mode": "direct"}, "v1")
    assert final_answer(events) == "fine"
    lm.stop()
    assert client.post(f"/api/v1/runs/{run_id}/replay").json()["result"] == "identical"

    def renamed(inputs: dict[str, Any]) -> dict[str, Any]:
        inputs["[REDACTED]"] = inputs.pop("workspace_id")
        return inputs

    def climbing(inputs: dict[str, Any]) -> dict[str, Any]:
        return {**inputs, "sources": [{"kind": "path", "name": "x", "path": "../other/memory/MEMORIES.md"}]}

    def untasked(inputs: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in inputs.items() if k != "task"}

    for edit, field in ((renamed, "[REDACTED]"), (climbing, "sources"), (untasked, "task")):
        _edit_inputs(app_settings, run_id, edit)
        refused = client.post(f"/api/v1/runs/{run_id}/replay")
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert error["code"] == "recording_invalid" and field in error["message"] and error["action"]
        assert "Traceback" not in refused.text
        together = client.put("/api/v1/replay-sets/bad", json={"run_ids": [run_id]})
        assert together.status_code == 200, together.text
        report = client.post("/api/v1/replay-sets/bad/replay").json()
        assert report["identical"] is False and report["reports"][0]["error"]["code"] == "recording_invalid"
    assert sorted(p.name for p in app_settings.workspaces_dir.iterdir() if p.name.startswith("replay-")) == []
