"""With content capture off no user or model text leaves the process: a real turn whose user text, attachment
name, artifact name, sub-LM and final answers, router reason and a provider error quoting the user's input all
hold planted strings is exported to a real OTLP receiver, and no exported byte holds any of them. With capture
on the same scan finds them (so the scan can see). The allowlist drops what it does not know."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode
from pydantic import SecretStr

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.telemetry import allowlist
from fleet_rlm.telemetry.redact import AllowlistExporter
from fleet_rlm.testing import FakeLMServer, FakeResponse, contains_rule, dspy_fields, rlm_step, rlm_submit, sub_lm_rule
from tests.helpers import final_answer, new_session, run_turn
from tests.telemetry.otlp_receiver import OTLPReceiver, ReceivedSpan

KINDS = ("user", "file", "filetext", "artifact", "sub", "answer", "reason", "failing")


@pytest.fixture
def planted() -> dict[str, str]:
    """A unique string per kind of content (lowercase letters and digits: id-shaped, the hardest case)."""
    return {kind: f"zq{kind}{uuid.uuid4().hex[:10]}" for kind in KINDS}


@pytest.fixture
def lm(planted: dict[str, str]) -> Iterator[FakeLMServer]:
    provider_error = FakeResponse.server_error(400, f"Invalid prompt: 'translate {planted['failing']}' is refused")
    rules = [contains_rule({planted["failing"]: provider_error}), sub_lm_rule(f"the sub-LM says {planted['sub']}")]
    with FakeLMServer(rules=rules) as server:
        yield server


def traced_turns(
    settings: Settings, lm: FakeLMServer, planted: dict[str, str], monkeypatch: pytest.MonkeyPatch, *, capture: bool
) -> OTLPReceiver:
    """An auto turn (router -> rlm) with an attachment that writes an artifact and asks a sub-LM, then a direct
    turn the provider refuses with a message quoting the user's input; both exported to a recording receiver."""
    with OTLPReceiver() as receiver:
        configured = settings.model_copy(
            update={
                "lm_model": lm.model,
                "lm_api_base": lm.base_url,
                "lm_api_key": SecretStr("fake"),
                "lm_num_retries": 0,
                "sandbox_pool_size": 0,
                "otel_enabled": True,
                "otel_capture_content": capture,
            }
        )
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        with TestClient(create_app(configured)) as client:
            session = new_session(client)
            upload = client.post(
                "/api/v1/attachments",
                files={"file": (f"{planted['file']}.txt", f"notes: {planted['filetext']}\n".encode(), "text/plain")},
                data={"session_id": session},
            )
            assert upload.status_code == 201, upload.text
            code = f"open(ARTIFACTS_DIR + '/{planted['artifact']}.txt', 'w').write('x')\nprint(llm_query('sum up'))"
            lm.push(
                dspy_fields(mode="rlm", reason=f"the user wants {planted['reason']}"),
                rlm_step("Write it down.", code),
                rlm_submit(answer=f"the answer is {planted['answer']}"),
            )
            body = {"content": f"please handle {planted['user']}", "attachment_ids": [upload.json()["id"]]}
            _, events = run_turn(client, session, body, "k1")
            assert planted["answer"] in final_answer(events)
            route = next(e for e in events if e["type"] == "route_decision")
            assert (route["mode"], planted["reason"] in route["reason"]) == ("rlm", True)
            assert any(planted["artifact"] in e["name"] for e in events if e["type"] == "artifact_created")
            _, failed = run_turn(client, session, {"content": f"translate {planted['failing']}"}, "k2")
            assert failed[-1]["type"] == "turn_failed", failed[-3:]
            deadline = time.monotonic() + 10
            while sum(span.parent_id is None for span in receiver.spans) < 2 and time.monotonic() < deadline:
                assert client.app.state.telemetry.flush()  # type: ignore[attr-defined]
                time.sleep(0.02)
    return receiver


def found(receiver: OTLPReceiver, planted: dict[str, str]) -> set[str]:
    exported = b"".join(receiver.bodies)
    return {kind for kind, text in planted.items() if text.encode() in exported}


def roots(receiver: OTLPReceiver) -> list[ReceivedSpan]:
    return [span for span in receiver.spans if span.parent_id is None]


def test_capture_off_exports_no_user_or_model_text(
    settings: Settings, lm: FakeLMServer, planted: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver = traced_turns(settings, lm, planted, monkeypatch, capture=False)
    assert len(roots(receiver)) == 2
    assert found(receiver, planted) == set()
    # the trace keeps its shape: every real span and event name is on the allowlist, ids and numbers survive
    names = {span.name for span in receiver.spans}
    assert allowlist.REDACTED_SPAN not in names and {"fleet.route", "fleet.mode.rlm", "fleet.sandbox.cell"} <= names
    assert all(allowlist.REDACTED_EVENT not in span.events for span in receiver.spans)
    assert any("artifact_created" in span.events for span in receiver.spans)
    ok, refused = sorted(roots(receiver), key=lambda span: span.start_ns)
    assert ok.attributes["fleet.status"] == "succeeded" and ok.attributes["fleet.usage.tokens_in"] > 0
    assert refused.attributes["fleet.status"] == "failed" and refused.status_code == 2  # STATUS_CODE_ERROR
    assert allowlist.CODE.accepts(refused.attributes["error.type"])
    route = next(span for span in receiver.spans if span.name == "fleet.route")
    assert route.attributes["fleet.route.mode"] == "rlm" and "fleet.route.reason" not in route.attributes
    assert all(key in allowlist.ATTRIBUTES for span in receiver.spans for key in span.attributes)


def test_capture_on_exports_the_content_the_scan_looks_for(
    settings: Settings, lm: FakeLMServer, planted: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver = traced_turns(settings, lm, planted, monkeypatch, capture=True)
    assert {"user", "file", "artifact", "sub", "answer", "reason", "failing"} <= found(receiver, planted)


def exported(**span: Any) -> Any:
    """One span through the allowlist exporter of a provider whose resource has a custom attribute."""
    memory = InMemorySpanExporter()
    resource = Resource.create({"service.name": "fleet-rlm", "customer.secret": "zqresource"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(AllowlistExporter(memory)))
    tracer = provider.get_tracer("t")
    linked = tracer.start_span("fleet.turn")
    with tracer.start_as_current_span(span["name"], attributes=span["attributes"]) as current:
        current.add_link(linked.get_span_context(), {"note": "zqlink"})
        current.add_event("warning", {"code": "slow_tool", "message": "zqmessage"})
        current.add_event("zqevent-name", {"chars": 3})
        current.record_exception(ValueError("zqexception"))
        current.set_status(Status(StatusCode.ERROR, "zqstatus"))
    (finished,) = memory.get_finished_spans()
    return finished


def test_the_allowlist_drops_unknown_attributes_and_all_text() -> None:
    assert not allowlist.allowed("fleet.unknown", 1) and not allowlist.allowed("fleet.route.reason", "rlm")
    assert allowlist.allowed("fleet.lm.role", "root") and not allowlist.allowed("fleet.lm.role", "zqrole")
    assert allowlist.allowed("fleet.run_id", "ab12") and not allowlist.allowed("fleet.run_id", "two words")
    assert not allowlist.allowed("fleet.duration_ms", -1) and not allowlist.allowed("fleet.lm.cached", 1)
    assert not allowlist.allowed("error.type", "Error: quoted input")
    span = exported(
        name="chat zqname",
        attributes={"gen_ai.request.model": "gpt-x", "input.value": "zqinput", "fleet.iteration": 2},
    )
    assert span.name == allowlist.REDACTED_SPAN  # not `chat <its model>`: a name carries no text
    assert dict(span.attributes) == {"gen_ai.request.model": "gpt-x", "fleet.iteration": 2}
    assert span.status.status_code is StatusCode.ERROR and span.status.description is None
    assert [(e.name, dict(e.attributes)) for e in span.events] == [
        ("warning", {"code": "slow_tool"}),
        (allowlist.REDACTED_EVENT, {"chars": 3}),
        ("exception", {"exception.type": "ValueError", "exception.escaped": "False"}),
    ]
    assert [dict(link.attributes) for link in span.links] == [{}]
    assert "customer.secret" not in span.resource.attributes and span.resource.attributes["service.name"]
    named = exported(name="chat gpt-x", attributes={"gen_ai.request.model": "gpt-x"})
    assert named.name == "chat gpt-x"


def test_the_docs_list_every_allowlisted_key() -> None:
    text = (Path(__file__).parents[2] / "docs" / "tracing.md").read_text()
    assert [key for key in allowlist.ATTRIBUTES if f"`{key}`" not in text] == []
