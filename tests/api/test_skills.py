"""Skill cards: the bundled cards parse and list, a selected card reaches the model's instructions, an unknown
one is refused before a run starts."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from fleet_rlm.skills import list_skills, skill_instructions
from fleet_rlm.skills.cards_loader import parse_card
from fleet_rlm.testing import FakeLMServer, adapter_fields_rule
from tests.api.isolation import assert_error, new_session
from tests.helpers import final_answer, run_turn

EXPECTED = {
    "citation-grounded-answers",
    "code-repository-review",
    "data-extraction-csv-json",
    "log-triage",
    "long-document-analysis",
    "memory-keeping",
}


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(rules=[adapter_fields_rule(answer="done")]) as server:
        yield server


def test_bundled_cards_are_complete() -> None:
    cards = list_skills()
    assert {card.id for card in cards} == EXPECTED
    for card in cards:
        assert card.title and card.description and card.when_to_use
        assert card.chars > 300, f"{card.id} is too thin to be useful"


def test_card_parsing_names_the_problem() -> None:
    with pytest.raises(ValueError, match="front matter"):
        parse_card("no front matter", source="x.md")
    with pytest.raises(ValueError, match="lacks title, description, when_to_use"):
        parse_card("---\nid: a\n---\nbody", source="x.md")
    with pytest.raises(ValueError, match="must be lowercase"):
        parse_card("---\nid: Bad Id\ntitle: t\ndescription: d\nwhen_to_use: w\n---\nbody", source="x.md")
    card = parse_card("---\nid: ok\ntitle: T\ndescription: D: with colon\nwhen_to_use: W\n---\n\nDo it.\n", source="x")
    assert (card.id, card.description, card.body) == ("ok", "D: with colon", "Do it.")


def test_instructions_for_selected_skills() -> None:
    assert skill_instructions([]) == ""
    text = skill_instructions(["log-triage", "memory-keeping", "log-triage"])
    assert text.count("## Skill:") == 2 and "Log triage" in text and "MEMORIES.md" in text


def test_list_and_get(client: TestClient) -> None:
    listed = client.get("/api/v1/skills").json()["items"]
    assert [item["id"] for item in listed] == sorted(EXPECTED)
    assert "text" not in listed[0]
    card = client.get("/api/v1/skills/log-triage").json()
    assert card["title"] == "Log triage" and "first failure" in card["text"]
    assert_error(client.get("/api/v1/skills/nope"), 404, "skill_not_found")


def test_selected_skill_reaches_the_model(client: TestClient, lm: FakeLMServer) -> None:
    session = new_session(client, {})
    before = len(lm.requests)
    body = {"content": "why did the job fail?", "execution_mode": "direct", "skills": ["log-triage"]}
    _, events = run_turn(client, session, body, "with-skill")
    assert final_answer(events) == "done"
    prompts = [json.dumps(r.json.get("messages")) for r in lm.requests[before:]]
    assert any("Skill: Log triage" in prompt and "first failure" in prompt for prompt in prompts)

    before = len(lm.requests)
    _, events = run_turn(client, session, {"content": "again", "execution_mode": "direct"}, "without-skill")
    assert not any("Skill: Log triage" in json.dumps(r.json.get("messages")) for r in lm.requests[before:])


def test_unknown_skill_is_refused_before_a_run(client: TestClient) -> None:
    session = new_session(client, {})
    response = client.post(
        f"/api/v1/sessions/{session}/turns",
        json={"content": "x", "skills": ["no-such-skill"]},
        headers={"Idempotency-Key": "k"},
    )
    body = assert_error(response, 422, "skill_not_found")
    assert "GET /api/v1/skills" in body["action"]
    valid = sorted(card.id for card in list_skills())
    assert all(skill in body["message"] and skill in body["action"] for skill in valid)
    assert body["details"] == {"skill": "no-such-skill", "valid": valid}
    with client.websocket_connect("/api/v1/ws/execution") as ws:  # the same code and list over the WebSocket
        ws.send_json({"type": "message", "session_id": session, "content": "x", "skills": ["nope"]})
        frame = ws.receive_json()
    assert frame["type"] == "error" and frame["code"] == "skill_not_found" and "log-triage" in frame["message"]
    missing = assert_error(client.get("/api/v1/skills/nope"), 404, "skill_not_found")
    assert "log-triage" in missing["action"]
    assert client.get(f"/api/v1/sessions/{session}/turns").json()["items"] == []
