"""`Telemetry`: the app's own tracer provider and OTLP/HTTP exporter, built from Settings and the standard
OTEL_* environment, and the factory of per-run traces.

Opt-in: nothing is built unless FLEET_OTEL_ENABLED is true, or it is unset and an OTLP endpoint variable is
(OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off). The provider is never installed globally,
so an embedding application's own tracing is left alone, and it does not register an exit hook: shutdown is
bounded by `shutdown(timeout_s)`, since a dead collector must not hold the server's exit either. With content
capture off (the default) the exporter is wrapped in `redact.AllowlistExporter`: only allowlisted data leaves.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter

from fleet_rlm.config import Settings
from fleet_rlm.telemetry.export import BoundedExport
from fleet_rlm.telemetry.links import DEFAULT_ENDPOINT, shown_endpoint, trace_url, traces_endpoint, tracing_enabled
from fleet_rlm.telemetry.redact import AllowlistExporter
from fleet_rlm.telemetry.trace import RunTrace

log = logging.getLogger(__name__)
SERVICE = "fleet-rlm"


def _resource() -> Resource:
    resource = Resource.create()  # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
    name = str(resource.attributes.get(SERVICE_NAME, ""))
    if not name or name.startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: SERVICE}))
    return resource


def _int_env(environ: Mapping[str, str], name: str, default: int) -> int:
    try:
        return int(environ.get(name, "") or default)
    except ValueError:
        log.warning("%s is not an integer; using %d", name, default)
        return default


class Telemetry:
    def __init__(
        self,
        exporter: SpanExporter,
        *,
        capture_content: bool = False,
        url_template: str | None = None,
        endpoint: str = DEFAULT_ENDPOINT,
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        self.capture_content = capture_content
        self.url_template = url_template
        self.endpoint = endpoint
        if not capture_content:  # the choke point: only allowlisted ids, counts, sizes, timings and enums leave
            exporter = AllowlistExporter(exporter)
        self.processor = BoundedExport(
            exporter,
            max_queue=_int_env(environ, "OTEL_BSP_MAX_QUEUE_SIZE", 2048),
            batch_size=_int_env(environ, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512),
        )
        self.provider = TracerProvider(resource=_resource(), shutdown_on_exit=False)
        self.provider.add_span_processor(self.processor)
        self.tracer = self.provider.get_tracer("fleet_rlm")
        self.traces_started = 0

    @classmethod
    def from_settings(cls, settings: Settings, environ: Mapping[str, str] = os.environ) -> Telemetry | None:
        """The app's telemetry, or None when tracing is off."""
        if not tracing_enabled(settings, environ):
            return None
        protocol = environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        if protocol and protocol.strip() != "http/protobuf":
            log.warning("OTLP protocol %r is not supported; exporting over http/protobuf", protocol)
        endpoint = traces_endpoint(environ)
        return cls(
            OTLPSpanExporter(endpoint=endpoint),
            capture_content=settings.otel_capture_content,
            url_template=settings.otel_trace_url_template,
            endpoint=endpoint,
            environ=environ,
        )

    def start_run(self, *, run_id: str, session_id: str, user_id: str | None) -> RunTrace:
        self.traces_started += 1
        return RunTrace(
            self.tracer, run_id=run_id, session_id=session_id, user_id=user_id, capture=self.capture_content
        )

    def trace_url(self, trace_id: str | None, span_id: str | None = None) -> str | None:
        return trace_url(self.url_template, trace_id, span_id)

    def status(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "endpoint": shown_endpoint(self.endpoint),
            "capture_content": self.capture_content,
            "traces_started": self.traces_started,
            **self.processor.stats().as_dict(),
        }

    def flush(self) -> bool:
        """Export everything queued now (blocking; for tests and `fleet` commands that exit right after)."""
        return self.provider.force_flush()

    def shutdown(self, timeout_s: float = 3.0) -> None:
        """Flush what is queued for up to `timeout_s`, then give up on it (a dead collector cannot hold exit)."""
        worker = threading.Thread(target=self.provider.shutdown, name="otel-shutdown", daemon=True)
        worker.start()
        worker.join(timeout_s)
        if worker.is_alive():
            log.warning("tracing: the collector did not take the last spans within %.1fs; dropped", timeout_s)
            self.processor.exporter.shutdown()  # stops the exporter's retries; the daemon thread then ends
