"""OpenAI wire shapes: chat completions (whole and SSE chunks), text completions, models, error bodies.

Bodies are complete (id, object, created, model, choices, usage, system_fingerprint) because strict clients
(the OpenAI SDK under LiteLLM, DSPy's native engine) validate them like a real provider's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from fleet_rlm.testing.fake_lm_types import FakeResponse, RecordedRequest, estimate_tokens

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


def usage_for(request: RecordedRequest, response: FakeResponse, choices: int = 1) -> dict[str, int]:
    """Token usage: estimated from the prompt and answer text unless the response fixes it."""
    prompt_tokens = estimate_tokens(request.text)
    completion_tokens = estimate_tokens(response.content) * choices
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if response.usage:
        usage.update(response.usage)
        if "total_tokens" not in response.usage:
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


def _choice_count(request: RecordedRequest) -> int:
    n = request.json.get("n", 1)
    return n if isinstance(n, int) and 1 <= n <= 128 else 1


def _model(request: RecordedRequest, fallback: str) -> str:
    return request.model or fallback


def chat_completion(request: RecordedRequest, response: FakeResponse, model: str) -> dict[str, Any]:
    n = _choice_count(request)
    return {
        "id": f"chatcmpl-fake-{request.index}",
        "object": "chat.completion",
        "created": int(request.timestamp),
        "model": _model(request, model),
        "system_fingerprint": "fp_fake_lm",
        "choices": [
            {
                "index": i,
                "message": {"role": "assistant", "content": response.content, "refusal": None},
                "logprobs": None,
                "finish_reason": response.finish_reason,
            }
            for i in range(n)
        ],
        "usage": usage_for(request, response, n),
    }


def text_completion(request: RecordedRequest, response: FakeResponse, model: str) -> dict[str, Any]:
    n = _choice_count(request)
    return {
        "id": f"cmpl-fake-{request.index}",
        "object": "text_completion",
        "created": int(request.timestamp),
        "model": _model(request, model),
        "choices": [
            {"index": i, "text": response.content, "logprobs": None, "finish_reason": response.finish_reason}
            for i in range(n)
        ],
        "usage": usage_for(request, response, n),
    }


def split_content(content: str, chunk_chars: int) -> list[str]:
    size = max(1, chunk_chars)
    return [content[i : i + size] for i in range(0, len(content), size)] or [""]


def chat_chunks(
    request: RecordedRequest, response: FakeResponse, model: str, chunk_chars: int
) -> Iterator[dict[str, Any]]:
    """The SSE payloads of a streamed chat completion, in order (without the final ``[DONE]``)."""
    base = {
        "id": f"chatcmpl-fake-{request.index}",
        "object": "chat.completion.chunk",
        "created": int(request.timestamp),
        "model": _model(request, model),
        "system_fingerprint": "fp_fake_lm",
    }
    n = _choice_count(request)
    include_usage = request.include_usage
    extra: dict[str, Any] = {"usage": None} if include_usage else {}

    def chunk(delta: dict[str, Any], finish: str | None, index: int) -> dict[str, Any]:
        choice = {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**base, "choices": [choice], **extra}

    for i in range(n):
        yield chunk({"role": "assistant", "content": ""}, None, i)
        for piece in split_content(response.content, chunk_chars):
            if piece:
                yield chunk({"content": piece}, None, i)
        yield chunk({}, response.finish_reason, i)
    if include_usage:
        yield {**base, "choices": [], "usage": usage_for(request, response, n)}


def text_chunks(
    request: RecordedRequest, response: FakeResponse, model: str, chunk_chars: int
) -> Iterator[dict[str, Any]]:
    """The SSE payloads of a streamed text completion."""
    base = {
        "id": f"cmpl-fake-{request.index}",
        "object": "text_completion",
        "created": int(request.timestamp),
        "model": _model(request, model),
    }
    for piece in split_content(response.content, chunk_chars):
        yield {**base, "choices": [{"index": 0, "text": piece, "logprobs": None, "finish_reason": None}]}
    yield {
        **base,
        "choices": [{"index": 0, "text": "", "logprobs": None, "finish_reason": response.finish_reason}],
    }
    if request.include_usage:
        yield {**base, "choices": [], "usage": usage_for(request, response)}


def sse_event(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return f"data: {data}\n\n".encode()


def error_body(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code or kind}}


def models_body(model_ids: list[str]) -> dict[str, Any]:
    created = int(time.time())
    return {
        "object": "list",
        "data": [{"id": m, "object": "model", "created": created, "owned_by": "fleet-rlm-fake"} for m in model_ids],
    }
