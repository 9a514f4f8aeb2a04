"""Whether tracing is on, where spans go and the link from a run to its trace: plain functions, no
OpenTelemetry import, so the API and status pages can use them when tracing is off at no cost."""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

from fleet_rlm.config import Settings

DEFAULT_ENDPOINT = "http://localhost:4318/v1/traces"


def tracing_enabled(settings: Settings, environ: Mapping[str, str] = os.environ) -> bool:
    """FLEET_OTEL_ENABLED when set, else whether an OTLP endpoint is configured; OTEL_SDK_DISABLED=true and
    OTEL_TRACES_EXPORTER=none always win."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return False
    if settings.otel_enabled is not None:
        return settings.otel_enabled
    return bool(environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def traces_endpoint(environ: Mapping[str, str] = os.environ) -> str:
    """Where spans go, resolved like the OTLP/HTTP exporter does (the signal URL, or base + /v1/traces)."""
    if signal := environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip():
        return signal
    if base := environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip():
        return base.rstrip("/") + "/v1/traces"
    return DEFAULT_ENDPOINT


def shown_endpoint(url: str) -> str:
    """The endpoint without credentials or query (safe to show on a status page)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def trace_url(template: str | None, trace_id: str | None, span_id: str | None = None) -> str | None:
    """The operator's link to a run's trace, or None without a template or a trace."""
    if not template or not trace_id:
        return None
    return template.replace("{trace_id}", trace_id).replace("{span_id}", span_id or "")
