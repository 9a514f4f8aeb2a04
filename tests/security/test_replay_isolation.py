"""A replay stages only the caller's own files (issue #40, class 1), against the real app with two token users.

The attack: user B gives a profile a secret whose text is a word of the recording's structure (`workspace_id`).
The recorder used to scrub secrets by string replacement over the recording's JSON, so the key `workspace_id`
of B's recorded inputs was replaced; the replay then staged B's context paths from the workspaces root, and a
path `<A's workspace id>/memory/diary.md` copied A's file into B's replay, whose divergence diff showed it.
Now secrets are redacted from values only, the inputs are validated, and a replay reads workspace context from
the caller's own workspace whatever the recording says.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.store import Database
from fleet_rlm.store.repos import recordings as recordings_repo
from fleet_rlm.testing import FakeLMServer, adapter_fields_rule
from tests.api.isolation import assert_error, bearer, new_session, on_app, token_settings
from tests.helpers import run_turn

A_SECRET = "alice-diary-7f3c9e: the launch code is 0451"
STRUCTURE_WORD = "workspace_id"  # a key of every recording's inputs, used by B as a secret value


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(rules=[adapter_fields_rule(answer="nothing to see")]) as server:
        yield server


@pytest.fixture
def client(settings: Settings, lm: FakeLMServer) -> Iterator[TestClient]:
    configured = token_settings(
        settings,
        lm_model=lm.model,
        lm_api_base=lm.base_url,
        lm_api_key="sk-operator-0123456789abcdef",
        allow_private_lm_bases=True,  # the fake LM is on loopback
        sandbox_pool_size=0,
        lm_num_retries=0,
        turn_processes=1,
    )
    with TestClient(create_app(configured)) as test_client:
        yield test_client


def _workspace_of(client: TestClient, headers: dict[str, str]) -> str:
    return str(client.get("/api/v1/auth/me", headers=headers).json()["workspace_id"])


def _plant_alice_diary(client: TestClient, settings: Settings, alice: dict[str, str]) -> str:
    workspace = _workspace_of(client, alice)
    (settings.workspaces_dir / workspace / "memory" / "diary.md").write_text(A_SECRET + "\n")
    return workspace


def _recorded_inputs(client: TestClient, run_id: str) -> dict[str, Any]:
    async def read(db: Database) -> dict[str, Any]:
        async with db.session() as s:
            row = await recordings_repo.get_recording(s, run_id=run_id)
        assert row is not None
        return dict(row.inputs)

    return on_app(client, read)


def _set_recorded_inputs(client: TestClient, run_id: str, inputs: dict[str, Any]) -> None:
    async def write(db: Database) -> None:
        async with db.transaction() as s:
            await recordings_repo.save_inputs(s, run_id=run_id, inputs=inputs)

    on_app(client, write)


def test_a_secret_named_like_a_key_cannot_point_a_replay_at_another_workspace(
    client: TestClient, lm: FakeLMServer
) -> None:
    settings: Settings = client.app.state.settings  # type: ignore[attr-defined]
    alice, bob = bearer(settings, "alice"), bearer(settings, "bob")
    alice_workspace = _plant_alice_diary(client, settings, alice)

    profile = client.post(
        "/api/v1/llm-profiles",
        json={"name": "crafted", "model": lm.model, "api_base": lm.base_url, "api_key": STRUCTURE_WORD},
        headers=bob,
    )
    assert profile.status_code == 201, profile.text
    bound = client.patch("/api/v1/llm-roles", json={"root": {"profile_id": profile.json()["id"]}}, headers=bob)
    assert bound.status_code == 200, bound.text
    session_id = new_session(client, bob)
    body = {
        "content": f"what does {STRUCTURE_WORD} hold?",
        "execution_mode": "direct",
        "context_paths": [f"{alice_workspace}/memory/diary.md"],
    }
    run_id, events = run_turn(client, session_id, body, "crafted-1", headers=bob)
    assert events[-1]["type"] == "turn_failed", events[-3:]  # the path is not in B's workspace: the live turn fails
    assert not any(A_SECRET in json.dumps(e) for e in events)

    inputs = _recorded_inputs(client, run_id)  # the recording's structure is intact: nothing keyed by text
    assert inputs["workspace_id"] == _workspace_of(client, bob) and "[REDACTED]" not in inputs
    assert inputs["sources"][0]["path"] == f"{alice_workspace}/memory/diary.md"

    replayed = client.post(f"/api/v1/runs/{run_id}/replay", headers=bob)
    assert A_SECRET not in replayed.text and "launch code" not in replayed.text
    error = assert_error(replayed, 409, "replay_source_missing")  # read from B's own workspace, where it is not
    assert "diary.md" in error["message"]
    assert not any(A_SECRET in r.text for r in lm.requests)


def test_a_recording_that_names_another_workspace_still_reads_the_callers(client: TestClient) -> None:
    """Whatever a recording says about where the run ran (here A's workspace id, written into B's recording),
    the replay stages workspace context from the caller's workspace."""
    settings: Settings = client.app.state.settings  # type: ignore[attr-defined]
    alice, bob = bearer(settings, "alice"), bearer(settings, "bob")
    alice_workspace = _plant_alice_diary(client, settings, alice)
    bob_workspace = _workspace_of(client, bob)
    (settings.workspaces_dir / bob_workspace / "memory" / "diary.md").write_text("bob's own diary\n")

    session_id = new_session(client, bob)
    body = {"content": "summarize my diary", "execution_mode": "direct", "context_paths": ["memory/diary.md"]}
    run_id, events = run_turn(client, session_id, body, "own-1", headers=bob)
    assert events[-1]["type"] == "turn_finished", events[-3:]
    inputs = _recorded_inputs(client, run_id)
    _set_recorded_inputs(client, run_id, {**inputs, "workspace_id": alice_workspace})

    report = client.post(f"/api/v1/runs/{run_id}/replay", headers=bob)
    assert report.status_code == 200, report.text
    assert A_SECRET not in report.text
    assert report.json()["result"] == "identical", report.json()["divergence"]  # B's own file, as recorded

    (settings.workspaces_dir / bob_workspace / "memory" / "diary.md").unlink()
    gone = client.post(f"/api/v1/runs/{run_id}/replay", headers=bob)
    assert A_SECRET not in gone.text
    assert_error(gone, 409, "replay_source_missing")
