"""Span names and attributes for a run's events: OpenTelemetry GenAI semantic conventions plus the OpenInference
names Phoenix and other LLM-aware backends read (`openinference.span.kind`, `llm.*`, `input.value`...).

Content (prompts, completions, code, REPL output, tool arguments and results, the task and the answer) is only
added when the operator turns capture on; without it spans carry models, roles, sizes, tokens and timings, and
whatever else a span carries is filtered by `allowlist` at export (a new attribute must be listed there).
"""

from __future__ import annotations

import json
from typing import Any

from fleet_rlm.events import ChildStart, LMCall, SubLMStart, ToolCall

Attributes = dict[str, Any]

KIND = "openinference.span.kind"
INPUT = "input.value"
OUTPUT = "output.value"


def provider_and_model(model: str) -> tuple[str, str]:
    """LiteLLM-style `provider/model` split; a bare model name keeps provider `unknown`."""
    provider, sep, name = model.partition("/")
    return (provider, name) if sep and provider and name else ("unknown", model)


def content(capture: bool, **values: Any) -> Attributes:
    """The given content attributes when capture is on (empty values left out), else nothing."""
    if not capture:
        return {}
    return {key: value for key, value in values.items() if value not in (None, "")}


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def lm_call(event: LMCall, capture: bool) -> tuple[str, Attributes]:
    """A chat span: `chat {model}` with the GenAI request/usage attributes (and OpenInference's LLM view)."""
    provider, model = provider_and_model(event.model)
    attributes: Attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": provider,
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
        "gen_ai.usage.input_tokens": event.tokens_in,
        "gen_ai.usage.output_tokens": event.tokens_out,
        KIND: "LLM",
        "llm.provider": provider,
        "llm.model_name": model,
        "llm.token_count.prompt": event.tokens_in,
        "llm.token_count.completion": event.tokens_out,
        "llm.token_count.total": event.tokens_in + event.tokens_out,
        "fleet.lm.role": event.role,
        "fleet.lm.model": event.model,
        "fleet.lm.latency_ms": event.latency_ms,
        "fleet.lm.cached": event.cached,
        "fleet.lm.cost_usd": event.cost_usd,
        "fleet.actor": event.actor,
    }
    if event.iteration:
        attributes["fleet.iteration"] = event.iteration
    if not event.ok:
        attributes["error.type"] = (event.error or "error").split(":", 1)[0][:100]
    prompt, response = event.prompt_preview, event.response_preview
    attributes |= content(
        capture,
        **{
            "gen_ai.input.messages": _messages("user", prompt) if prompt else None,
            "gen_ai.output.messages": _messages("assistant", response) if response else None,
            INPUT: prompt,
            OUTPUT: response,
        },
    )
    return f"chat {model}", attributes


def sub_lm(event: SubLMStart, capture: bool) -> tuple[str, Attributes]:
    """An llm_query from REPL code: the tool-shaped wrapper around the chat span it causes."""
    attributes: Attributes = {
        KIND: "TOOL",
        "tool.name": "llm_query" if event.batch_id is None else "llm_query_batched",
        "gen_ai.request.model": provider_and_model(event.model)[1],
        "fleet.lm.role": event.role,
        "fleet.sub_lm.call_id": event.call_id,
        "fleet.actor": event.actor,
    }
    if event.batch_id is not None:
        attributes |= {
            "fleet.batch.id": event.batch_id,
            "fleet.batch.index": event.batch_index or 0,
            "fleet.batch.size": event.batch_size or 0,
        }
    attributes |= content(capture, **{INPUT: event.prompt_preview})
    return str(attributes["tool.name"]), attributes


def tool_call(event: ToolCall, capture: bool) -> tuple[str, Attributes]:
    attributes: Attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": event.name,
        "gen_ai.tool.call.id": event.call_id,
        KIND: "TOOL",
        "tool.name": event.name,
        "fleet.actor": event.actor,
    }
    args = json.dumps(event.args, default=str) if event.args else None
    attributes |= content(capture, **{"tool.parameters": args, INPUT: args})
    return f"execute_tool {event.name}", attributes


def child(event: ChildStart, capture: bool) -> tuple[str, Attributes]:
    attributes: Attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.id": event.child_id,
        "gen_ai.agent.name": "rlm_child",
        KIND: "AGENT",
        "fleet.child.id": event.child_id,
        "fleet.child.depth": event.child_depth,
        "fleet.actor": f"child:{event.child_id}",
    }
    attributes |= content(capture, **{INPUT: event.task_preview})
    return f"invoke_agent child:{event.child_id}", attributes
