"""The export queue is bounded and counts what it drops; tracing is opt-in and follows the standard variables."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from fleet_rlm.config import Settings
from fleet_rlm.telemetry.export import BoundedExport
from fleet_rlm.telemetry.links import shown_endpoint, trace_url, traces_endpoint, tracing_enabled

pytestmark = pytest.mark.db_independent


class StuckExporter(SpanExporter):
    """A collector that never answers until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.received = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.release.wait(10)
        self.received += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.release.set()


def test_a_stuck_collector_never_blocks_ending_spans_and_drops_are_counted() -> None:
    exporter = StuckExporter()
    processor = BoundedExport(exporter, max_queue=4, batch_size=4)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("t")
    started = time.monotonic()
    for i in range(50):
        tracer.start_span(f"s{i}").end()
    assert time.monotonic() - started < 1.0  # ending a span only enqueues
    stats = processor.stats()
    assert stats.queued_spans <= 4 and stats.dropped_spans >= 50 - 8  # at most one batch in flight + a full queue
    exporter.release.set()
    provider.shutdown()
    final = processor.stats()
    assert final.exported_spans == exporter.received == 50 - final.dropped_spans
    assert final.queued_spans == 0 and final.failed_spans == 0


def test_tracing_is_opt_in_and_follows_the_standard_variables() -> None:
    off, on = Settings(_env_file=None), Settings(_env_file=None, otel_enabled=True)  # type: ignore[call-arg]
    assert not tracing_enabled(off, {})
    assert tracing_enabled(off, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert tracing_enabled(off, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"})
    assert tracing_enabled(on, {})
    assert not tracing_enabled(on, {"OTEL_SDK_DISABLED": "true"})
    assert not tracing_enabled(on, {"OTEL_TRACES_EXPORTER": "none"})
    explicit_off = Settings(_env_file=None, otel_enabled=False)  # type: ignore[call-arg]
    assert not tracing_enabled(explicit_off, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert traces_endpoint({}) == "http://localhost:4318/v1/traces"
    assert traces_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}) == "http://c:4318/v1/traces"
    assert shown_endpoint("https://user:secret@c.example:4318/v1/traces?token=x") == "https://c.example:4318/v1/traces"


def test_trace_links_come_from_the_template() -> None:
    template = "http://localhost:16686/trace/{trace_id}"
    assert trace_url(template, "ab" * 16, "cd" * 8) == f"http://localhost:16686/trace/{'ab' * 16}"
    assert trace_url(None, "ab" * 16) is None and trace_url(template, None) is None
    with pytest.raises(ValueError, match="trace_id"):
        Settings(_env_file=None, otel_trace_url_template="http://localhost:16686/trace/")  # type: ignore[call-arg]
