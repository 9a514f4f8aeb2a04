"""Tracing end to end over HTTP: a real rlm turn (sub-LM batch, a child RLM) reaches an in-process OTLP/HTTP
receiver as one trace per run, the run stores and returns its trace ids and link, and a dead collector changes
nothing for the turn."""

from __future__ import annotations

import socket
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.testing import FakeLMServer, rlm_step, sub_lm_rule
from fleet_rlm.testing.fake_lm_dspy import dspy_fields
from tests.helpers import final_answer, run_turn
from tests.runtime.test_recursion import child_rule
from tests.runtime.test_run_trace import EXPECTED, FAN_OUT, normalized
from tests.telemetry.otlp_receiver import OTLPReceiver, ReceivedSpan

LINK = "http://jaeger.test/trace/{trace_id}?uiFind={span_id}"


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(rules=[child_rule(grandchild=False), sub_lm_rule("plain answer")]) as server:
        yield server


def make_client(settings: Settings, lm: FakeLMServer, **tracing: Any) -> TestClient:
    configured = settings.model_copy(
        update={
            "lm_model": lm.model,
            "lm_api_base": lm.base_url,
            "lm_api_key": SecretStr("fake"),
            "sandbox_pool_size": 0,
            "otel_trace_url_template": LINK,
            **tracing,
        }
    )
    return TestClient(create_app(configured))


def rlm_turn(client: TestClient, lm: FakeLMServer, key: str) -> tuple[str, list[dict[str, Any]]]:
    lm.push(rlm_step("Fan out.", FAN_OUT), rlm_step("Done.", "SUBMIT(answer='combined')"))
    session = client.post("/api/v1/sessions", json={"title": "traced"}).json()["id"]
    body = {"content": "fan out", "execution_mode": "rlm", "max_depth": 1}
    run_id, events = run_turn(client, session, body, key)
    assert final_answer(events) == "combined"
    return run_id, events


def span_tree(spans: list[ReceivedSpan]) -> Any:
    kids: dict[str | None, list[ReceivedSpan]] = {}
    for span in spans:
        kids.setdefault(span.parent_id, []).append(span)

    def node(span: ReceivedSpan) -> Any:
        return (span.name, [node(c) for c in sorted(kids.get(span.span_id, []), key=lambda s: s.start_ns)])

    (root,) = kids[None]
    return node(root)


def test_each_run_is_one_trace_at_the_collector(
    settings: Settings, lm: FakeLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OTLPReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)  # standard variable turns it on
        monkeypatch.setenv("OTEL_SERVICE_NAME", "fleet-under-test")
        with make_client(settings, lm) as client:
            run_id, _ = rlm_turn(client, lm, "k1")
            lm.push(dspy_fields(reasoning="easy", answer="Paris"))
            session = client.post("/api/v1/sessions", json={"title": "second"}).json()["id"]
            second_id, _ = run_turn(client, session, {"content": "Capital?", "execution_mode": "direct"}, "k2")
            # the client sees a turn end once its answer is committed; the server closes the run's root span
            # just after, so flush until both roots have arrived before comparing the export counters
            deadline = time.monotonic() + 10
            while True:
                assert client.app.state.telemetry.flush()  # type: ignore[attr-defined]
                if sum(span.parent_id is None for span in receiver.spans) >= 2 or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
            run = client.get(f"/api/v1/runs/{run_id}").json()
            second = client.get(f"/api/v1/runs/{second_id}").json()
            status = client.get("/api/v1/runtime/status").json()["tracing"]
    trace_id, span_id = run["trace_id"], run["span_id"]
    assert len(trace_id) == 32 and len(span_id) == 16
    assert run["trace_url"] == f"http://jaeger.test/trace/{trace_id}?uiFind={span_id}"
    by_trace: dict[str, list[ReceivedSpan]] = {}
    for span in receiver.spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    assert set(by_trace) == {trace_id, second["trace_id"]}  # one trace per run, nothing else
    spans = by_trace[trace_id]
    assert normalized(span_tree(spans)) == EXPECTED
    root = next(s for s in spans if s.parent_id is None)
    assert root.span_id == span_id and root.name == "fleet.turn" and root.service == "fleet-under-test"
    assert root.attributes["fleet.run_id"] == run_id and root.attributes["fleet.status"] == "succeeded"
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert len(chats) == 5 and all(s.kind == 3 for s in chats)  # SPAN_KIND_CLIENT
    for chat in chats:
        a = chat.attributes
        assert a["gen_ai.system"] == "openai" and a["gen_ai.request.model"] == lm.model.split("/")[-1]
        assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
        assert chat.end_ns > chat.start_ns and "gen_ai.input.messages" not in a  # content capture is off
    assert sum(s.attributes["gen_ai.usage.input_tokens"] for s in chats) == run["usage"]["tokens_in"]
    direct = by_trace[second["trace_id"]]
    assert [s.name for s in direct if s.parent_id is None] == ["fleet.turn"]
    assert {s.name for s in direct} >= {"fleet.route", "fleet.mode.direct"}
    assert status["enabled"] is True and status["dropped_spans"] == 0 and status["failed_spans"] == 0
    assert status["exported_spans"] == len(receiver.spans) and status["traces_started"] == 2


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_dead_collector_changes_nothing_for_the_turn(
    settings: Settings, lm: FakeLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with make_client(settings, lm) as client:  # tracing off: the reference run
        _, plain = rlm_turn(client, lm, "k1")
        assert client.app.state.telemetry is None  # type: ignore[attr-defined]
        assert client.get("/api/v1/runtime/status").json()["tracing"] == {**TRACING_OFF}
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "10")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    client = make_client(settings, lm, otel_enabled=True)
    with client:
        started = time.monotonic()
        run_id, traced = rlm_turn(client, lm, "k2")
        took = time.monotonic() - started
        run = client.get(f"/api/v1/runs/{run_id}").json()
        client.app.state.telemetry.flush()  # type: ignore[attr-defined]
        status = client.get("/api/v1/runtime/status").json()["tracing"]
        closing = time.monotonic()
    shutdown_s = time.monotonic() - closing
    assert run["status"] == "succeeded" and run["trace_id"]
    assert Counter(e["type"] for e in traced) == Counter(e["type"] for e in plain)
    assert [e["seq"] for e in traced] == list(range(1, len(traced) + 1))
    assert status["exported_spans"] == 0 and status["failed_spans"] > 0
    assert took < 60 and shutdown_s < 10, (took, shutdown_s)


TRACING_OFF = {
    "enabled": False,
    "endpoint": None,
    "capture_content": False,
    "traces_started": 0,
    "queued_spans": 0,
    "exported_spans": 0,
    "failed_spans": 0,
    "dropped_spans": 0,
}
