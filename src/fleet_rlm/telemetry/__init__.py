"""OpenTelemetry export of runs: each run is one trace built from its event stream (see docs/tracing.md).

Layer: beside llm/sandbox/store; imports only config and events, and is the only package that imports
opentelemetry. `links` has the plain helpers (on/off, endpoint, trace link); `setup.Telemetry` (which imports
the SDK, so only when tracing is on) starts a `trace.RunTrace` per run that the services layer feeds events;
with content capture off every span leaves through `redact.AllowlistExporter`, which keeps only what
`allowlist` lists (ids, codes, counts, sizes, timings, enums, bools).
"""
