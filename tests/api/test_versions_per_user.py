"""Program versions are per user (issue 13 item 6): a user's promotion changes only their own turns, only its
owner (or an admin, for the global scope) rolls it back, and listings hide other users' dataset names.

Versions are seeded as a finished optimization run would leave them (a run row and its saved version) so the
matrix runs real turns on the fake LM without running GEPA each time. Runs on SQLite, and on Postgres with
FLEET_DATABASE_URL set.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.store import Database
from fleet_rlm.store.repos import optimization as opt_repo
from fleet_rlm.store.repos import programs as programs_repo
from tests.api.isolation import assert_error, bearer, new_session, on_app, token_settings, user_id
from tests.optimize.fakes import TAUGHT, teaching_lm

API = "/api/v1/optimization"


@pytest.fixture
def world(settings: Settings) -> Iterator[tuple[TestClient, Settings]]:
    with teaching_lm() as lm:
        configured = token_settings(
            settings,
            lm_model=lm.model,
            lm_api_base=lm.base_url,
            lm_api_key=SecretStr("fake"),
            sandbox_pool_size=0,
            run_heartbeat_s=0.5,
            admin_users="root",
        )
        with TestClient(create_app(configured)) as client:
            yield client, configured


def seed_version(client: TestClient, headers: dict[str, str], dataset_name: str) -> tuple[str, str]:
    """A succeeded optimization run of `direct` owned by the caller and the version it saved: (run id, label)."""
    owner = user_id(client, headers)

    async def seed(db: Database) -> tuple[str, str]:
        async with db.transaction() as s:
            run = await opt_repo.create_run(
                s,
                user_id=owner,
                module="direct",
                dataset_id=None,
                config={"dataset_name": dataset_name, "val_size": 2, "baseline_version": "builtin-1"},
            )
            label = await programs_repo.next_version_label(s, module="direct")
            await programs_repo.add_version(
                s,
                user_id=owner,
                module="direct",
                version=label,
                program={"module": "direct", "instructions": {"p": TAUGHT}, "runtime": {"direct": TAUGHT}},
                manifest={"dataset": {"id": "d1", "name": dataset_name, "rows": 6}, "optimization_run_id": run.id},
            )
            await opt_repo.set_status(s, run_id=run.id, status="running")
            scores = {"baseline": 0.0, "optimized": 1.0}  # better than the built-in on its validation rows
            await opt_repo.set_status(s, run_id=run.id, status="succeeded", program_version=label, scores=scores)
        return run.id, label

    return on_app(client, seed)


def turn_version(client: TestClient, headers: dict[str, str], key: str) -> str:
    """Run one direct turn as the caller and return the program version it ran."""
    session_id = new_session(client, headers)
    body = {"content": "what is 8 squared? [answer=64]", "execution_mode": "direct"}
    with client.stream(
        "POST", f"/api/v1/sessions/{session_id}/turns", json=body, headers={**headers, "Idempotency-Key": key}
    ) as response:
        assert response.status_code == 200, response.read()
        run_id = response.headers["X-Run-Id"]
        assert "turn_finished" in "".join(response.iter_text())
    return str(client.get(f"/api/v1/runs/{run_id}", headers=headers).json()["program_version"])


def versions(client: TestClient, headers: dict[str, str]) -> dict[str, dict[str, Any]]:
    response = client.get(f"{API}/versions", headers=headers)
    assert response.status_code == 200, response.text
    return {item["version"]: item for item in response.json()}


def test_versions_are_per_user_and_admins_promote_globally(world: tuple[TestClient, Settings]) -> None:
    client, settings = world
    alice, bob, root = (bearer(settings, name) for name in ("alice", "bob", "root"))
    alice_run, alice_version = seed_version(client, alice, "alice-private-dataset")

    promoted = client.post(f"{API}/runs/{alice_run}/promote", headers=alice)
    assert promoted.status_code == 200, promoted.text
    assert promoted.json()["promoted"] and promoted.json()["promoted_for_you"]
    assert not promoted.json()["promoted_globally"]
    assert turn_version(client, alice, "a1") == alice_version
    assert turn_version(client, bob, "b1") == "builtin-1", "alice's promotion does not change bob's turns"

    assert versions(client, bob) == {}, "bob does not see alice's versions"
    assert "alice-private-dataset" not in client.get(f"{API}/versions", headers=bob).text
    assert_error(client.post(f"{API}/runs/{alice_run}/promote", headers=bob), 404, "optimization_run_not_found")
    rolled = client.post(f"{API}/modules/direct/rollback", headers=bob)
    assert rolled.json() == {"module": "direct", "scope": "user", "promoted": None}
    assert turn_version(client, alice, "a2") == alice_version, "bob's rollback does not touch alice's promotion"
    assert_error(client.post(f"{API}/modules/direct/rollback?scope=global", headers=bob), 403, "admin_required")
    assert_error(client.post(f"{API}/runs/{alice_run}/promote?scope=global", headers=alice), 403, "admin_required")

    root_run, root_version = seed_version(client, root, "root-dataset")
    globally = client.post(f"{API}/runs/{root_run}/promote?scope=global", headers=root)
    assert globally.status_code == 200 and globally.json()["promoted_globally"], globally.text
    assert turn_version(client, bob, "b2") == root_version, "a global promotion reaches every user..."
    assert turn_version(client, alice, "a3") == alice_version, "...who has not promoted their own"
    seen = versions(client, bob)
    assert list(seen) == [root_version] and seen[root_version]["promoted"] and not seen[root_version]["owned"]
    assert seen[root_version]["manifest"]["dataset"] == {"rows": 6}, "the owner's dataset name is hidden"
    assert "optimization_run_id" not in seen[root_version]["manifest"]
    mine = versions(client, alice)
    assert set(mine) == {alice_version, root_version}
    assert mine[alice_version]["manifest"]["dataset"]["name"] == "alice-private-dataset", "owners see their own"
    assert mine[alice_version]["promoted"] and not mine[root_version]["promoted"]

    back = client.post(f"{API}/modules/direct/rollback", headers=alice).json()
    assert back["promoted"]["version"] == root_version, "alice's rollback falls back to the global version"
    assert turn_version(client, alice, "a4") == root_version
    status = client.get(f"{API}/status", headers=bob).json()
    assert (status["program_versions"], status["promoted_versions"]) == (1, 1)

    cleared = client.post(f"{API}/modules/direct/rollback?scope=global", headers=root).json()
    assert cleared == {"module": "direct", "scope": "global", "promoted": None}
    assert turn_version(client, bob, "b3") == "builtin-1"
    assert turn_version(client, alice, "a5") == "builtin-1"
    assert versions(client, bob) == {}, "a withdrawn global version is no longer listed for others"
