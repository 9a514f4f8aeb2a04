"""The fake LM over plain HTTP (httpx): wire shapes, streaming, scripting, errors, recording, concurrency."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from fleet_rlm.testing import (
    DEFAULT_TEXT,
    FakeLMServer,
    FakeResponse,
    RecordedRequest,
    contains_rule,
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


def test_queue_is_fifo_then_default(client: httpx.Client) -> None:
    with FakeLMServer(["one", "two"], default="fallback") as lm:
        answers = [
            client.post(f"{lm.base_url}/chat/completions", json=chat()).json()["choices"][0]["message"][
                "content"
            ]
            for _ in range(4)
        ]
        assert answers == ["one", "two", "fallback", "fallback"]
        assert lm.pending == 0


def test_default_text_explains_empty_queue(lm: FakeLMServer, client: httpx.Client) -> None:
    reply = client.post(f"{lm.base_url}/chat/completions", json=chat())
    assert reply.json()["choices"][0]["message"]["content"] == DEFAULT_TEXT
    assert "push" in DEFAULT_TEXT.lower()


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


def test_requests_are_recorded(lm: FakeLMServer, client: httpx.Client) -> None:
    before = time.time()
    client.post(f"{lm.base_url}/chat/completions", json=chat("first", temperature=0.5))
    client.post(f"{lm.base_url}/chat/completions", json={**chat("second", stream=True), "model": "other"})
    recorded = lm.requests
    assert [r.index for r in recorded] == [0, 1]
    first, last = recorded[0], lm.last_request
    assert isinstance(last, RecordedRequest)
    assert first.messages == [{"role": "user", "content": "first"}]
    assert first.json["temperature"] == 0.5 and first.model == "fake-model" and not first.stream
    assert last.model == "other" and last.stream and last.last_user_text == "second"
    assert first.path == "/v1/chat/completions" and first.method == "POST"
    assert before <= first.timestamp <= last.timestamp
    assert first.response is not None and first.response.content == DEFAULT_TEXT
    lm.clear()
    assert lm.requests == [] and lm.last_request is None


def test_message_parts_count_as_text(lm: FakeLMServer, client: httpx.Client) -> None:
    parts = [{"type": "text", "text": "look at"}, {"type": "image_url", "image_url": {"url": "x"}}]
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": parts}]
    client.post(f"{lm.base_url}/chat/completions", json={"model": "m", "messages": messages})
    request = lm.last_request
    assert request is not None
    assert request.system_text == "be brief" and request.last_user_text == "look at"
    assert request.text == "be brief\nlook at"


def test_rules_come_before_queue_and_may_pass(client: httpx.Client) -> None:
    rule = contains_rule({"magic": "42"}, where="last_user")
    with FakeLMServer(["queued"], rule=rule) as lm:
        url = f"{lm.base_url}/chat/completions"
        assert (
            client.post(url, json=chat("the magic word")).json()["choices"][0]["message"]["content"] == "42"
        )
        assert client.post(url, json=chat("plain")).json()["choices"][0]["message"]["content"] == "queued"


def test_async_rule_and_failing_rule(lm: FakeLMServer, client: httpx.Client) -> None:
    async def echo(request: RecordedRequest) -> str | None:
        await asyncio.sleep(0)
        return f"echo: {request.last_user_text}" if request.last_user_text != "fail" else None

    def fail(request: RecordedRequest) -> str:
        raise RuntimeError("rule exploded")

    lm.add_rule(echo)
    lm.add_rule(fail)
    url = f"{lm.base_url}/chat/completions"
    assert client.post(url, json=chat("ping")).json()["choices"][0]["message"]["content"] == "echo: ping"
    broken = client.post(url, json=chat("fail"))
    assert broken.status_code == 500
    assert broken.json()["error"]["code"] == "fake_lm.rule_failed"
    assert "rule exploded" in broken.json()["error"]["message"]


def test_concurrent_requests_each_get_one_answer() -> None:
    count = 60
    with FakeLMServer([f"answer-{i}" for i in range(count)], latency_s=0.05) as lm:

        async def one(c: httpx.AsyncClient, i: int) -> str:
            reply = await c.post(f"{lm.base_url}/chat/completions", json=chat(f"q{i}"))
            return str(reply.json()["choices"][0]["message"]["content"])

        async def run() -> list[str]:
            limits = httpx.Limits(max_connections=count)
            async with httpx.AsyncClient(timeout=30, limits=limits) as c:
                return await asyncio.gather(*(one(c, i) for i in range(count)))

        answers = asyncio.run(run())
        assert sorted(answers) == sorted(f"answer-{i}" for i in range(count))
        assert sorted(r.index for r in lm.requests) == list(range(count))
        assert {r.last_user_text for r in lm.requests} == {f"q{i}" for i in range(count)}
        assert lm.pending == 0


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
    with client.stream(
        "POST", f"{lm.base_url}/completions", json={"model": "m", "prompt": "s", "stream": True}
    ) as r:
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

    reply = client.post(
        f"{lm.base_url}/chat/completions", content=body(), headers={"content-type": "application/json"}
    )
    assert reply.status_code == 200
    assert lm.last_request is not None and lm.last_request.last_user_text == "chunked upload"


def test_control_api(lm: FakeLMServer, client: httpx.Client) -> None:
    pushed = client.post(f"{lm.url}/_fake/responses", json=["a", {"content": "b", "delay_s": 0}])
    assert pushed.json() == {"pending": 2}
    client.post(f"{lm.base_url}/chat/completions", json=chat("x"))
    log = client.get(f"{lm.url}/_fake/requests").json()["requests"]
    assert len(log) == 1 and log[0]["body"]["messages"][0]["content"] == "x"
    bad = client.post(f"{lm.url}/_fake/responses", json={"nonsense": 1})
    assert bad.status_code == 400 and "fake_lm.bad_script" in bad.json()["error"]["message"]
    assert client.post(f"{lm.url}/_fake/reset").json() == {"pending": 0}
    assert lm.requests == []
    assert client.get(f"{lm.url}/health").json()["status"] == "ok"


async def test_usable_from_async_tests() -> None:
    async with FakeLMServer(["async ok"]) as lm, httpx.AsyncClient() as c:
        reply = await c.post(f"{lm.base_url}/chat/completions", json=chat())
        assert reply.json()["choices"][0]["message"]["content"] == "async ok"


def test_max_recorded_keeps_newest(client: httpx.Client) -> None:
    with FakeLMServer(max_recorded=2) as lm:
        for i in range(5):
            client.post(f"{lm.base_url}/chat/completions", json=chat(f"m{i}"))
        assert [r.last_user_text for r in lm.requests] == ["m3", "m4"]
        assert [r.index for r in lm.requests] == [3, 4]
        assert len(lm.wait_for_requests(5, timeout_s=1)) == 2
        with pytest.raises(TimeoutError):
            lm.wait_for_requests(6, timeout_s=0.05)
