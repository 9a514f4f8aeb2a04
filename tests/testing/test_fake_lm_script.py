"""The fake LM's scripting over HTTP: queue and default, rules, the request log, concurrency, control API."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from fleet_rlm.testing import (
    DEFAULT_TEXT,
    FakeLMServer,
    RecordedRequest,
    contains_rule,
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


def test_queue_is_fifo_then_default(client: httpx.Client) -> None:
    with FakeLMServer(["one", "two"], default="fallback") as lm:
        answers = [
            client.post(f"{lm.base_url}/chat/completions", json=chat()).json()["choices"][0]["message"]["content"]
            for _ in range(4)
        ]
        assert answers == ["one", "two", "fallback", "fallback"]
        assert lm.pending == 0


def test_default_text_explains_empty_queue(lm: FakeLMServer, client: httpx.Client) -> None:
    reply = client.post(f"{lm.base_url}/chat/completions", json=chat())
    assert reply.json()["choices"][0]["message"]["content"] == DEFAULT_TEXT
    assert "push" in DEFAULT_TEXT.lower()


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
        assert client.post(url, json=chat("the magic word")).json()["choices"][0]["message"]["content"] == "42"
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


def test_max_recorded_keeps_newest(client: httpx.Client) -> None:
    with FakeLMServer(max_recorded=2) as lm:
        for i in range(5):
            client.post(f"{lm.base_url}/chat/completions", json=chat(f"m{i}"))
        assert [r.last_user_text for r in lm.requests] == ["m3", "m4"]
        assert [r.index for r in lm.requests] == [3, 4]
        assert len(lm.wait_for_requests(5, timeout_s=1)) == 2
        with pytest.raises(TimeoutError):
            lm.wait_for_requests(6, timeout_s=0.05)
