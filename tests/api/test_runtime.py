"""Runtime over HTTP: per-user LM profiles drive turns, per-user runtime settings shape new turns, the status
report and the on-demand checks."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.optimize.modules import list_modules
from fleet_rlm.services.turns.lifecycle import turn_worker_count
from fleet_rlm.testing import FakeLMServer, adapter_fields_rule, python_block
from tests.api.isolation import assert_error, bearer, new_session, token_settings
from tests.helpers import final_answer, run_turn

KEY = "sk-profile-key-9876543210"


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(rules=[adapter_fields_rule(answer="from the fake")]) as server:
        yield server


@pytest.fixture
def app_settings(settings: Settings, lm: FakeLMServer) -> Settings:
    return token_settings(
        settings,
        lm_model="openai/env-model",
        lm_api_base=lm.base_url,
        lm_api_key=SecretStr("env-key"),
        sandbox_pool_size=0,
        run_heartbeat_s=0.5,
        lm_num_retries=0,
        allow_private_lm_bases=True,  # the fake LM runs on loopback
        admin_users="root",
    )


def models_called(lm: FakeLMServer, since: int) -> list[tuple[str | None, str | None]]:
    return [(r.model, r.headers.get("authorization")) for r in lm.requests[since:] if r.path.endswith("/completions")]


def test_turns_use_the_callers_bound_profile(client: TestClient, app_settings: Settings, lm: FakeLMServer) -> None:
    alice, bob = bearer(app_settings, "alice"), bearer(app_settings, "bob")
    body = {"name": "mine", "model": "openai/profile-model", "api_base": lm.base_url, "api_key": KEY}
    profile = client.post("/api/v1/llm-profiles", json=body, headers=alice).json()
    bound = client.patch("/api/v1/llm-roles", json={"root": {"profile_id": profile["id"]}}, headers=alice)
    assert bound.status_code == 200, bound.text

    session = new_session(client, alice)
    before = len(lm.requests)
    run_id, events = run_turn(client, session, {"content": "hi", "execution_mode": "direct"}, "a1", alice)
    assert final_answer(events) == "from the fake"
    assert models_called(lm, before) == [("profile-model", f"Bearer {KEY}")]

    # bob has no profiles: the server's environment model serves him
    before = len(lm.requests)
    bob_session = new_session(client, bob)
    _, bob_events = run_turn(client, bob_session, {"content": "hi", "execution_mode": "direct"}, "b1", bob)
    assert final_answer(bob_events) == "from the fake"
    assert models_called(lm, before) == [("env-model", "Bearer env-key")]

    # the key never shows up in what a client can read back
    texts = [
        json.dumps(events),
        client.get(f"/api/v1/runs/{run_id}", headers=alice).text,
        client.get(f"/api/v1/runs/{run_id}/events", headers=alice).text,
        client.get(f"/api/v1/sessions/{session}/export", headers=alice).text,
        client.get("/api/v1/llm-profiles", headers=alice).text,
        client.get("/api/v1/llm-roles", headers=alice).text,
        client.get("/api/v1/runtime/status", headers=alice).text,
    ]
    assert not [text for text in texts if KEY in text]


def test_the_session_profile_decides_the_root_model(
    client: TestClient, app_settings: Settings, lm: FakeLMServer
) -> None:
    """`/profile NAME` in the chat PATCHes the session's settings: session profile > role binding > server env."""
    alice, bob = bearer(app_settings, "alice"), bearer(app_settings, "bob")
    for name in ("bound", "chosen"):
        body = {"name": name, "model": f"openai/{name}-model", "api_base": lm.base_url, "api_key": KEY}
        created = client.post("/api/v1/llm-profiles", json=body, headers=alice).json()
        if name == "bound":
            client.patch("/api/v1/llm-roles", json={"root": {"profile_id": created["id"]}}, headers=alice)

    def models_of_turn(session: str, headers: dict[str, str], key: str) -> set[str | None]:
        before = len(lm.requests)
        _, events = run_turn(client, session, {"content": "hi", "execution_mode": "direct"}, key, headers)
        assert final_answer(events) == "from the fake"
        return {model for model, _ in models_called(lm, before)}

    def use_profile(session: str, headers: dict[str, str], name: str) -> None:  # what the chat's /profile sends
        current = client.get(f"/api/v1/sessions/{session}", headers=headers).json()["settings"]
        patched = client.patch(
            f"/api/v1/sessions/{session}", json={"settings": {**current, "profile": name}}, headers=headers
        )
        assert patched.status_code == 200, patched.text

    plain, chosen = new_session(client, alice), new_session(client, alice)
    assert models_of_turn(plain, alice, "p1") == {"bound-model"}
    use_profile(chosen, alice, "chosen")
    assert models_of_turn(chosen, alice, "c1") == {"chosen-model"}
    assert models_of_turn(plain, alice, "p2") == {"bound-model"}, "only that session changed"

    bobs = new_session(client, bob)  # bob has no profiles of his own: the server's env profile by name
    assert models_of_turn(bobs, bob, "b1") == {"env-model"}
    use_profile(bobs, bob, "ghost")
    _, events = run_turn(client, bobs, {"content": "hi", "execution_mode": "direct"}, "b2", bob)
    assert events[-1]["type"] == "turn_failed" and events[-1]["code"] == "profile_not_found"
    assert "ghost" in events[-1]["message"] and "/profile" in events[-1]["action"]


def test_a_model_override_and_the_sub_role_reach_the_runtime(
    client: TestClient, app_settings: Settings, lm: FakeLMServer
) -> None:
    alice = bearer(app_settings, "alice")
    body = {"name": "mine", "model": "openai/profile-model", "api_base": lm.base_url, "api_key": KEY}
    profile = client.post("/api/v1/llm-profiles", json=body, headers=alice).json()
    client.patch(
        "/api/v1/llm-roles", json={"root": {"profile_id": profile["id"], "model": "openai/override"}}, headers=alice
    )
    before = len(lm.requests)
    _, events = run_turn(client, new_session(client, alice), {"content": "x", "execution_mode": "direct"}, "k", alice)
    assert final_answer(events)
    assert {model for model, _ in models_called(lm, before)} == {"override"}


def test_a_broken_binding_fails_the_turn_with_its_code(settings: Settings, lm: FakeLMServer) -> None:
    """No server model and a profile without a root binding: the turn fails with model_not_configured."""
    configured = settings.model_copy(update={"sandbox_pool_size": 0, "run_heartbeat_s": 0.5})
    with TestClient(create_app(configured)) as client:
        body = {"name": "sub-only", "model": lm.model, "api_base": lm.base_url}
        profile = client.post("/api/v1/llm-profiles", json=body).json()
        client.patch("/api/v1/llm-roles", json={"sub": {"profile_id": profile["id"]}})
        _, events = run_turn(client, new_session(client, {}), {"content": "x", "execution_mode": "direct"}, "k")
        assert events[-1]["type"] == "turn_failed"
        assert events[-1]["code"] == "model_not_configured" and events[-1]["action"]
        assert "Settings page" in events[-1]["action"] and "fleet-rlm profiles add" in events[-1]["action"]
        test = client.post("/api/v1/runtime/tests/lm")
        assert_error(test, 409, "model_not_configured")


def test_runtime_settings_overrides_apply_to_new_turns(client: TestClient, app_settings: Settings) -> None:
    alice, bob = bearer(app_settings, "alice"), bearer(app_settings, "bob")
    initial = client.get("/api/v1/runtime/settings", headers=alice).json()
    assert initial["overrides"] == {} and initial["effective"] == initial["defaults"]
    assert initial["defaults"]["max_iters"] == app_settings.max_iters
    assert initial["server"]["sandbox_cell_timeout_s"] == app_settings.sandbox_cell_timeout_s
    patched = client.patch(
        "/api/v1/runtime/settings", json={"default_mode": "direct", "max_iters": 7, "max_depth": 0}, headers=alice
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["overrides"] == {"default_mode": "direct", "max_iters": 7, "max_depth": 0}
    assert patched.json()["effective"]["max_iters"] == 7
    assert client.get("/api/v1/runtime/settings", headers=bob).json()["overrides"] == {}

    run_id, events = run_turn(client, new_session(client, alice), {"content": "hi", "max_llm_calls": 9}, "k", alice)
    assert final_answer(events)
    run = client.get(f"/api/v1/runs/{run_id}", headers=alice).json()
    assert run["execution_mode"] == "direct"
    assert run["budgets"]["max_iters"] == 7 and run["budgets"]["max_depth"] == 0
    assert run["budgets"]["max_llm_calls"] == 9, "the turn's own field wins over the user's settings"
    route = next(event for event in events if event["type"] == "route_decision")
    assert route["mode"] == "direct"

    reset = client.patch("/api/v1/runtime/settings", json={"max_iters": None}, headers=alice).json()
    assert reset["overrides"] == {"default_mode": "direct", "max_depth": 0}
    assert reset["effective"]["max_iters"] == app_settings.max_iters


def test_runtime_settings_validation(client: TestClient, app_settings: Settings) -> None:
    alice = bearer(app_settings, "alice")
    for body in ({"max_iters": 0}, {"max_depth": 9}, {"default_mode": "fast"}, {"sandbox_memory_mb": 1}):
        response = client.patch("/api/v1/runtime/settings", json=body, headers=alice)
        assert_error(response, 422, "invalid_input")
    assert client.get("/api/v1/runtime/settings", headers=alice).json()["overrides"] == {}


def test_status_reports_database_sandbox_daytona_model_and_runs(client: TestClient, app_settings: Settings) -> None:
    alice = bearer(app_settings, "alice")
    status = client.get("/api/v1/runtime/status", headers=alice)
    assert status.status_code == 200, status.text
    data = status.json()
    assert data["database"]["kind"] == app_settings.database_kind
    assert data["database"]["reachable"] and data["database"]["at_head"]
    assert data["database"]["revision"] == data["database"]["head"]
    assert data["sandbox"]["backend"] == "local" and data["sandbox"]["isolation"] in ("bubblewrap", "reduced")
    assert data["sandbox"]["pool"] is not None and data["sandbox"]["live_sandboxes"] == 0
    assert data["daytona"] == {
        "configured": False,
        "api_url": None,
        "reachable": None,
        "detail": "set DAYTONA_API_KEY and DAYTONA_API_URL",
    }
    assert data["root_model"]["configured"] and data["root_model"]["model"] == "openai/env-model"
    assert data["root_model"]["source"] == "env"
    assert data["active_runs"] == 0
    assert data["turn_workers"] == turn_worker_count(app_settings) > 0  # the default: worker processes


def test_status_reports_an_unreachable_daytona(settings: Settings, closed_port: int) -> None:
    configured = settings.model_copy(
        update={
            "daytona_api_url": f"http://127.0.0.1:{closed_port}/api",
            "daytona_api_key": SecretStr("k"),
            "sandbox_pool_size": 0,
        }
    )
    with TestClient(create_app(configured)) as client:
        data = client.get("/api/v1/runtime/status").json()
        assert data["daytona"]["configured"] is True and data["daytona"]["reachable"] is False
        assert data["root_model"] == {
            "configured": False,
            "profile_name": None,
            "model": None,
            "source": None,
            "problem": "no language model is configured for the root role",
        }


def test_lm_check_of_the_root_role(client: TestClient, app_settings: Settings, lm: FakeLMServer) -> None:
    alice = bearer(app_settings, "alice")
    result = client.post("/api/v1/runtime/tests/lm", headers=alice)
    assert result.status_code == 200, result.text
    assert result.json()["ok"] is True and result.json()["profile"] == "env"
    assert result.json()["model"] == "openai/env-model"


def test_daytona_check_without_configuration_says_so(client: TestClient, app_settings: Settings) -> None:
    refused = client.post("/api/v1/runtime/tests/daytona", headers=bearer(app_settings, "alice"))
    assert_error(refused, 403, "admin_required")  # it uses the server's Daytona account
    result = client.post("/api/v1/runtime/tests/daytona", headers=bearer(app_settings, "root"))
    assert result.status_code == 200
    data = result.json()
    assert data["available"] is True and data["configured"] is False and data["ok"] is False
    assert "DAYTONA_API_KEY" in data["message"]


def test_optimization_status_is_truthful(client: TestClient, app_settings: Settings) -> None:
    data = client.get("/api/v1/optimization/status", headers=bearer(app_settings, "alice")).json()
    assert data["gepa_available"] is True
    assert "rlm.task" in data["program_modules"]
    assert data["registered_modules"] == len(list_modules()), "programs, tasks and skills are all modules"
    assert data["program_versions"] == 0 and data["active_runs"] == 0


@pytest.fixture
def closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_run_a_budget_stopped_is_partial(client: TestClient, app_settings: Settings, lm: FakeLMServer) -> None:
    """An RLM turn that runs out of iterations succeeds with an extracted answer, recorded partial (run + event)."""
    alice = bearer(app_settings, "alice")
    never_submits = adapter_fields_rule(choose=lambda field, _: python_block("print(1)") if field == "code" else None)
    lm.script.set_rules([never_submits])
    body = {"content": "never done", "execution_mode": "rlm", "max_iters": 1}
    run_id, events = run_turn(client, new_session(client, alice), body, "partial", alice)
    assert final_answer(events) and events[-1]["outcome"] == "partial" and events[-1]["stop_reason"] == "max_iters"
    run = client.get(f"/api/v1/runs/{run_id}", headers=alice).json()
    assert (run["status"], run["outcome"], run["stop_reason"]) == ("succeeded", "partial", "max_iters")
    lm.script.set_rules([adapter_fields_rule()])
    body = {"content": "hi", "execution_mode": "direct"}
    done_id, events = run_turn(client, new_session(client, alice), body, "complete", alice)
    assert events[-1]["outcome"] == "complete"
    done = client.get(f"/api/v1/runs/{done_id}", headers=alice).json()
    assert (done["outcome"], done["stop_reason"]) == ("complete", None)
