"""A tiny in-process OTLP/HTTP trace receiver: decodes each ExportTraceServiceRequest (protobuf) into plain spans,
and keeps every request body as received (decompressed) so a test can scan all exported bytes."""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


@dataclass
class ReceivedSpan:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status_code: int
    attributes: dict[str, Any]
    events: list[str]
    service: str


@dataclass
class OTLPReceiver:
    spans: list[ReceivedSpan] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    requests: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver._add(request, self.path, body)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def _add(self, request: ExportTraceServiceRequest, path: str, body: bytes) -> None:
        assert path == "/v1/traces", path
        spans = []
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    spans.append(
                        ReceivedSpan(
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex() or None,
                            name=span.name,
                            kind=span.kind,
                            start_ns=span.start_time_unix_nano,
                            end_ns=span.end_time_unix_nano,
                            status_code=span.status.code,
                            attributes={a.key: _value(a.value) for a in span.attributes},
                            events=[e.name for e in span.events],
                            service=str(resource.get("service.name")),
                        )
                    )
        with self._lock:
            self.requests += 1
            self.spans.extend(spans)
            self.bodies.append(body)

    def __enter__(self) -> OTLPReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
