"""`BoundedExport`: the SDK's BatchSpanProcessor behind a gate that counts what it could not send.

Ending a span only appends it to a bounded in-memory queue; a background thread exports batches. When the
collector is slow or gone the queue fills and further spans are dropped at the gate (counted), so a turn never
waits for the collector and memory stays bounded. The counters are what /api/v1/runtime/status reports.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

log = logging.getLogger(__name__)


@dataclass
class ExportStats:
    queued_spans: int = 0
    exported_spans: int = 0
    failed_spans: int = 0
    dropped_spans: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class _CountingExporter(SpanExporter):
    def __init__(self, inner: SpanExporter, owner: BoundedExport) -> None:
        self.inner = inner
        self.owner = owner

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.owner._taken(len(spans))
        try:
            result = self.inner.export(spans)
        except Exception as exc:  # an exporter bug must not kill the export thread
            log.warning("span export failed: %s", exc)
            result = SpanExportResult.FAILURE
        self.owner._exported(len(spans), result is SpanExportResult.SUCCESS)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


class BoundedExport(SpanProcessor):
    def __init__(self, exporter: SpanExporter, *, max_queue: int = 2048, batch_size: int = 512) -> None:
        self.max_queue = max(1, max_queue)
        self.exporter = exporter
        self._lock = threading.Lock()
        self._stats = ExportStats()
        self._batch = BatchSpanProcessor(
            _CountingExporter(exporter, self),
            max_queue_size=self.max_queue,
            max_export_batch_size=max(1, min(batch_size, self.max_queue)),
        )

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        if not (span.context and span.context.trace_flags.sampled):
            return
        with self._lock:
            if self._stats.queued_spans >= self.max_queue:
                self._stats.dropped_spans += 1
                return
            self._stats.queued_spans += 1
        self._batch.on_end(span)

    def _taken(self, count: int) -> None:
        with self._lock:
            self._stats.queued_spans = max(0, self._stats.queued_spans - count)

    def _exported(self, count: int, ok: bool) -> None:
        with self._lock:
            if ok:
                self._stats.exported_spans += count
            else:
                self._stats.failed_spans += count

    def stats(self) -> ExportStats:
        with self._lock:
            return ExportStats(**asdict(self._stats))

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._batch.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self._batch.shutdown()
