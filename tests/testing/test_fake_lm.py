"""The fake LM over plain HTTP (httpx): wire shapes, streaming, errors, latency, hanging, other endpoints."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from fleet_rlm.testing import (
    FakeLMServer,
    FakeResponse,
    estimate_tokens,
)


def chat(text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"model": "fake-model", "messages": [{"role": "user", "content": text}], **extra}


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer() as server:
        yield server


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as c:
        yield c


def sse_payloads(response: httpx.Response) -> list[Any]:
    events = [line[len("data: ") :] for line in response.iter_lines() if line.startswith("data: ")]
    return [e if e == "[DONE]" else json.loads(e) for e in events]


def test_addresses_and_model(lm: FakeLMServer) -> None:
    assert lm.base_url == f"http://127.0.0.1:{lm.port}/v1"
    assert lm.port > 0
    assert lm.model == "openai/fake-model"
    assert lm.lm_kwargs()["api_base"] == lm.base_url


def test_non_stream_completion_has_full_body_and_usage(lm: FakeLMServer, client: httpx.Client) -> None:
    lm.push("The answer is four.")
    reply = client.post(f"{lm.base_url}/chat/completions", json=chat("what is two plus two"))
    assert reply.status_code == 200
    body = reply.json()
    assert body["object"] == "chat.completion"
    assert body["model"] == "fake-model"
    assert body["id"].startswith("chatcmpl-")
    assert body["choices"][0]["message"] == {
        "role": "assistant",
        "content": "The answer is four.",
        "refusal": None,
    }
    assert body["choices"][0]["finish_reason"] == "stop"
    usage = body["usage"]
    assert usage["prompt_tokens"] == estimate_tokens("what is two plus two")
    assert usage["completion_tokens"] == estimate_tokens("The answer is four.")
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_stream_sends_chunks_usage_and_done(lm: FakeLMServer, client: httpx.Client) -> None:
    text = "A streamed answer that spans several chunks of text."
    lm.push(FakeResponse(text, stream_chunk_chars=5))
    body = chat(stream=True, stream_options={"include_usage": True})
    with client.stream("POST", f"{lm.base_url}/chat/completions", json=body) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        payloads = sse_payloads(reply)
    assert payloads[-1] == "[DONE]"
    chunks = payloads[:-1]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert content == text
    assert len([c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")]) > 5
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] == estimate_tokens(text)


def test_stream_without_include_usage_has_no_usage_chunk(lm: FakeLMServer, client: httpx.Client) -> None:
    lm.push("short")
    with client.stream("POST", f"{lm.base_url}/chat/completions", json=chat(stream=True)) as reply:
        payloads = sse_payloads(reply)
    assert payloads[-1] == "[DONE]"
    assert all(p["choices"] and "usage" not in p for p in payloads[:-1])


def test_rate_limit_error_with_retry_after(lm: FakeLMServer, client: httpx.Client) -> None:
    lm.push(FakeResponse.rate_limited(retry_after=3), "after the limit")
    reply = client.post(f"{lm.base_url}/chat/completions", json=chat())
    assert reply.status_code == 429
    assert reply.headers["retry-after"] == "3"
    assert reply.headers["retry-after-ms"] == "3000"
    assert reply.json()["error"]["type"] == "rate_limit_error"
    again = client.post(f"{lm.base_url}/chat/completions", json=chat())
    assert again.json()["choices"][0]["message"]["content"] == "after the limit"


def test_server_error_and_raw_body_from_dicts(lm: FakeLMServer, client: httpx.Client) -> None:
    lm.push(
        {"status": 500, "error": "boom"},
        {"status": 200, "json": {"anything": [1, 2]}, "headers": {"x-a": "b"}},
    )
    first = client.post(f"{lm.base_url}/chat/completions", json=chat())
    assert first.status_code == 500
    assert first.json()["error"] == {
        "message": "boom",
        "type": "server_error",
        "param": None,
        "code": "server_error",
    }
    second = client.post(f"{lm.base_url}/chat/completions", json=chat(stream=True))
    assert second.json() == {"anything": [1, 2]}
    assert second.headers["x-a"] == "b"


def test_hang_times_out_client_and_server_keeps_serving(lm: FakeLMServer) -> None:
    lm.push(FakeResponse.hanging(), "still alive")
    with httpx.Client(timeout=0.3) as short, pytest.raises(httpx.ReadTimeout):
        short.post(f"{lm.base_url}/chat/completions", json=chat())
    with httpx.Client(timeout=10) as c:
        reply = c.post(f"{lm.base_url}/chat/completions", json=chat())
    assert reply.json()["choices"][0]["message"]["content"] == "still alive"


def test_hang_with_limit_drops_connection(lm: FakeLMServer, client: httpx.Client) -> None:
    lm.push(FakeResponse.hanging(hang_s=0.05))
    with pytest.raises(httpx.RemoteProtocolError):
        client.post(f"{lm.base_url}/chat/completions", json=chat())


def test_stop_closes_hanging_connections() -> None:
    server = FakeLMServer([FakeResponse.hanging()]).start()
    errors: list[BaseException] = []

    async def call() -> None:
        async with httpx.AsyncClient(timeout=30) as c:
            try:
                await c.post(f"{server.base_url}/chat/completions", json=chat())
            except httpx.HTTPError as exc:
                errors.append(exc)

    async def scenario() -> None:
        task = asyncio.create_task(call())
        await asyncio.to_thread(server.wait_for_requests, 1)
        await asyncio.to_thread(server.stop)
        await task

    asyncio.run(scenario())
    assert len(errors) == 1 and isinstance(errors[0], httpx.RemoteProtocolError)


def test_latency_global_and_per_response(client: httpx.Client) -> None:
    with FakeLMServer(["slow", FakeResponse("slower", delay_s=0.3)], latency_s=0.15) as lm:
        start = time.perf_counter()
        client.post(f"{lm.base_url}/chat/completions", json=chat())
        assert time.perf_counter() - start >= 0.15
        start = time.perf_counter()
        client.post(f"{lm.base_url}/chat/completions", json=chat())
        assert time.perf_counter() - start >= 0.3


def test_choices_n(lm: FakeLMServer, client: httpx.Client) -> None:
    lm.push("same")
    body = client.post(f"{lm.base_url}/chat/completions", json=chat(n=3)).json()
    assert [c["message"]["content"] for c in body["choices"]] == ["same"] * 3
    assert body["usage"]["completion_tokens"] == 3 * estimate_tokens("same")


def test_models_completions_and_errors(lm: FakeLMServer, client: httpx.Client) -> None:
    models = client.get(f"{lm.base_url}/models").json()
    assert models["data"][0]["id"] == "fake-model"
    lm.push("text out", "streamed text out")
    done = client.post(f"{lm.base_url}/completions", json={"model": "m", "prompt": "say"}).json()
    assert done["object"] == "text_completion" and done["choices"][0]["text"] == "text out"
    with client.stream("POST", f"{lm.base_url}/completions", json={"model": "m", "prompt": "s", "stream": True}) as r:
        payloads = sse_payloads(r)
    assert "".join(p["choices"][0]["text"] for p in payloads[:-1]) == "streamed text out"
    assert lm.last_request is not None and lm.last_request.prompt == "s"
    missing = client.post(f"{lm.base_url}/embeddings", json={})
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found_error"
    bad = client.post(f"{lm.base_url}/chat/completions", content=b"{not json")
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"


def test_chunked_request_body(lm: FakeLMServer, client: httpx.Client) -> None:
    payload = json.dumps(chat("chunked upload")).encode()

    def body() -> Iterator[bytes]:
        for i in range(0, len(payload), 7):
            yield payload[i : i + 7]

    reply = client.post(f"{lm.base_url}/chat/completions", content=body(), headers={"content-type": "application/json"})
    assert reply.status_code == 200
    assert lm.last_request is not None and lm.last_request.last_user_text == "chunked upload"


async def test_usable_from_async_tests() -> None:
    async with FakeLMServer(["async ok"]) as lm, httpx.AsyncClient() as c:
        reply = await c.post(f"{lm.base_url}/chat/completions", json=chat())
        assert reply.json()["choices"][0]["message"]["content"] == "async ok"
