"""An untitled session is named after its first task when the turn is created; a typed title is kept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.services.turns.titles import title_from_task
from fleet_rlm.testing import FakeLMServer, adapter_fields_rule
from tests.helpers import final_answer, run_turn


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with FakeLMServer(rules=[adapter_fields_rule(answer="ok")]) as lm:
        configured = settings.model_copy(
            update={
                "lm_model": lm.model,
                "lm_api_base": lm.base_url,
                "lm_api_key": SecretStr("fake"),
                "sandbox_pool_size": 0,
            }
        )
        with TestClient(create_app(configured)) as test_client:
            yield test_client


def title_of(client: TestClient, session_id: str) -> str:
    return str(client.get(f"/api/v1/sessions/{session_id}").json()["title"])


def test_first_task_titles_an_untitled_session_and_later_turns_do_not(client: TestClient) -> None:
    session_id = client.post("/api/v1/sessions", json={"title": ""}).json()["id"]
    _, events = run_turn(
        client, session_id, {"content": "\n  Compare the   Q3 numbers\nwith Q2", "execution_mode": "direct"}, "t1"
    )
    assert final_answer(events) == "ok"
    assert title_of(client, session_id) == "Compare the Q3 numbers"
    run_turn(client, session_id, {"content": "Now plot them", "execution_mode": "direct"}, "t2")
    assert title_of(client, session_id) == "Compare the Q3 numbers"


def test_a_title_the_user_gave_is_kept(client: TestClient) -> None:
    session_id = client.post("/api/v1/sessions", json={"title": "My research"}).json()["id"]
    run_turn(client, session_id, {"content": "Summarize the paper", "execution_mode": "direct"}, "t1")
    assert title_of(client, session_id) == "My research"


def test_long_tasks_are_cut_at_a_word_with_an_ellipsis() -> None:
    title = title_from_task(
        "Please read every document in the workspace and build a detailed comparison table of prices"
    )
    assert len(title) <= 60 and title.endswith("…")
    assert title.startswith("Please read every document") and not title[:-1].endswith(" ")
    assert title_from_task("   \n\n") == ""
