"""What a span may carry when content capture is off: every exported attribute key with the kind of its value.

A key not listed here, or a value not of its key's kind, is dropped (never truncated). The kinds hold no text:
an id (a generated identifier or a configured name: no whitespace, bounded), a code (an error/warning code or an
exception type), a count, a size or a timing (non-negative numbers), an enum (one of its listed values) or a
bool. So the router's reason, file, attachment and artifact names, error messages, prompts and answers have no
key to travel under. Span names are a fixed name, or a prefix plus the value of an allowlisted attribute of the
same span (`chat <gen_ai.request.model>`); any other name becomes `fleet.span`. `redact` applies this to spans.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,127}")
_CODE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,99}")


@dataclass(frozen=True)
class Kind:
    name: str  # id, code, count, size, timing, enum, bool
    values: frozenset[str] = frozenset()  # an enum's allowed values

    def accepts(self, value: Any) -> bool:
        if self.name == "bool":
            return isinstance(value, bool)
        if self.name in ("count", "size", "timing"):
            number = isinstance(value, int | float) and not isinstance(value, bool)
            return number and math.isfinite(value) and value >= 0
        if not isinstance(value, str):
            return False
        if self.name == "enum":
            return value in self.values
        pattern = _ID if self.name == "id" else _CODE
        return pattern.fullmatch(value) is not None


ID, CODE, COUNT, SIZE, TIMING, BOOL = (Kind(k) for k in ("id", "code", "count", "size", "timing", "bool"))


def enum(*values: str) -> Kind:
    return Kind("enum", frozenset(values))


MODE = enum("direct", "tools", "rlm")
REQUESTED_MODE = enum("auto", "direct", "tools", "rlm")

ATTRIBUTES: dict[str, Kind] = {
    # every span
    "openinference.span.kind": enum("LLM", "TOOL", "AGENT", "CHAIN", "RETRIEVER"),
    "fleet.actor": ID,
    "fleet.iteration": COUNT,
    "error.type": CODE,
    # fleet.turn
    "fleet.run_id": ID,
    "fleet.session_id": ID,
    "session.id": ID,
    "user.id": ID,
    "fleet.turn_id": ID,
    "fleet.requested_mode": REQUESTED_MODE,
    "fleet.mode": MODE,
    "fleet.status": enum("succeeded", "failed", "cancelled", "interrupted"),
    "fleet.duration_ms": TIMING,
    "fleet.usage.tokens_in": COUNT,
    "fleet.usage.tokens_out": COUNT,
    "fleet.usage.cost_usd": COUNT,
    "fleet.usage.lm_calls": COUNT,
    "fleet.usage.iterations": COUNT,
    # fleet.route (not its reason: free text from the router model)
    "fleet.route.mode": MODE,
    "fleet.route.requested_mode": REQUESTED_MODE,
    "fleet.context_chars": SIZE,
    # chat spans
    "gen_ai.operation.name": enum("chat", "execute_tool", "invoke_agent"),
    "gen_ai.system": ID,
    "gen_ai.provider.name": ID,
    "gen_ai.request.model": ID,
    "gen_ai.usage.input_tokens": COUNT,
    "gen_ai.usage.output_tokens": COUNT,
    "llm.provider": ID,
    "llm.model_name": ID,
    "llm.token_count.prompt": COUNT,
    "llm.token_count.completion": COUNT,
    "llm.token_count.total": COUNT,
    "fleet.lm.role": enum("root", "sub", "delegate", "router", "reflection"),
    "fleet.lm.model": ID,
    "fleet.lm.latency_ms": TIMING,
    "fleet.lm.cached": BOOL,
    "fleet.lm.cost_usd": COUNT,
    # sandbox cells
    "fleet.cell.code_chars": SIZE,
    "fleet.cell.stdout_chars": SIZE,
    "fleet.cell.stderr_chars": SIZE,
    "fleet.cell.omitted_chars": SIZE,
    # tools, sub-LM calls, children
    "tool.name": ID,
    "gen_ai.tool.name": ID,
    "gen_ai.tool.call.id": ID,
    "fleet.latency_ms": TIMING,
    "fleet.sub_lm.call_id": ID,
    "fleet.batch.id": ID,
    "fleet.batch.index": COUNT,
    "fleet.batch.size": COUNT,
    "gen_ai.agent.id": ID,
    "gen_ai.agent.name": enum("rlm_child"),
    "fleet.child.id": ID,
    "fleet.child.depth": COUNT,
    # span events (warning, error, status, budget_exhausted, context_loaded, artifact_created, ...)
    "code": CODE,
    "phase": CODE,
    "budget": CODE,
    "limit": COUNT,
    "used": COUNT,
    "size_bytes": SIZE,
    "source": enum("file", "attachment", "text", "url", "repository", "workspace", "history", "other"),
    "chars": SIZE,
    "truncated": BOOL,
    "exception.type": CODE,  # record_exception: the type only, never its message or stack trace
    "exception.escaped": enum("True", "False"),  # the SDK records it as a string
    # the resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES: only these standard keys)
    "service.name": ID,
    "service.namespace": ID,
    "service.version": ID,
    "service.instance.id": ID,
    "deployment.environment": ID,
    "deployment.environment.name": ID,
    "telemetry.sdk.name": ID,
    "telemetry.sdk.language": ID,
    "telemetry.sdk.version": ID,
}

EVENT_NAMES = frozenset(
    {
        "status",
        "warning",
        "error",
        "budget_exhausted",
        "sandbox_reset",
        "artifact_created",
        "memory_updated",
        "context_loaded",
        "exception",
    }
)
SPAN_NAMES = frozenset(
    {
        "fleet.turn",
        "fleet.context",
        "fleet.route",
        "fleet.mode.direct",
        "fleet.mode.tools",
        "fleet.mode.rlm",
        "fleet.sandbox.cell",
        "llm_query",
        "llm_query_batched",
    }
)
NAMED_BY = (
    ("chat ", "gen_ai.request.model"),
    ("execute_tool ", "gen_ai.tool.name"),
    ("invoke_agent child:", "fleet.child.id"),
    ("fleet.rlm.iteration ", "fleet.iteration"),
)
REDACTED_SPAN = "fleet.span"
REDACTED_EVENT = "fleet.event"


def allowed(key: str, value: Any) -> bool:
    kind = ATTRIBUTES.get(key)
    return kind is not None and kind.accepts(value)


def attributes(items: Mapping[str, Any] | Iterable[tuple[str, Any]] | None) -> dict[str, Any]:
    """The allowlisted attributes of `items`; the rest dropped."""
    pairs = items.items() if isinstance(items, Mapping) else items or ()
    return {key: value for key, value in pairs if allowed(key, value)}


def span_name(name: str, kept: Mapping[str, Any]) -> str:
    """`name` when it is fixed, or a prefix plus an allowlisted attribute `kept` on the span; else `fleet.span`."""
    if name in SPAN_NAMES:
        return name
    for prefix, key in NAMED_BY:
        if name.startswith(prefix) and key in kept and name[len(prefix) :] == str(kept[key]):
            return name
    return REDACTED_SPAN


def event_name(name: str) -> str:
    return name if name in EVENT_NAMES else REDACTED_EVENT
