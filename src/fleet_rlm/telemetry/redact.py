"""`AllowlistExporter`: the one choke point spans pass on their way out when content capture is off.

It wraps the real exporter and hands it a copy of each span holding only what `allowlist` lets through: the
span's attributes, its name, its events (names and attributes, `record_exception`'s included, reduced to the
exception's type), its links' attributes and its resource's attributes. A status keeps its code and loses its
description (an error's message). Filtering at export rather than where spans are built means no code path that
sets an attribute, adds an event or records an exception can get around it; it runs on the export thread, so a
turn never pays for it.
"""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Link, Status

from fleet_rlm.telemetry import allowlist


def redact(span: ReadableSpan, resource: Resource | None = None) -> ReadableSpan:
    """A copy of `span` with only allowlisted content (`resource`: its already-redacted resource, if known)."""
    kept = allowlist.attributes(span.attributes)
    events = [Event(allowlist.event_name(e.name), allowlist.attributes(e.attributes), e.timestamp) for e in span.events]
    links = [Link(link.context, allowlist.attributes(link.attributes)) for link in span.links]
    return ReadableSpan(
        name=allowlist.span_name(span.name, kept),
        context=span.context,
        parent=span.parent,
        resource=resource or redact_resource(span.resource),
        attributes=kept,
        events=events,
        links=links,
        kind=span.kind,
        status=Status(span.status.status_code),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def redact_resource(resource: Resource | None) -> Resource:
    if resource is None:
        return Resource({})
    return Resource(allowlist.attributes(resource.attributes), resource.schema_url)


class AllowlistExporter(SpanExporter):
    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self._last: tuple[Resource | None, Resource] | None = None  # (a span's resource, its redacted copy)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([redact(span, self._resource(span.resource)) for span in spans])

    def _resource(self, resource: Resource | None) -> Resource:
        if self._last is None or self._last[0] is not resource:  # one provider has one resource: computed once
            self._last = (resource, redact_resource(resource))
        return self._last[1]

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)
