"""The fake LM as DSPy and LiteLLM see it: dspy.LM (native engine and LiteLLM), streaming through
litellm.completion, dspy.Predict end to end, and the RLM scripting helpers against dspy.RLM's own signatures.

LITELLM_LOCAL_MODEL_COST_MAP must be set before litellm is imported (it otherwise tries to fetch the cost map
over the network); the root tests/conftest.py should set it for the whole suite.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from collections.abc import Iterator

import dspy
import litellm
import pytest
from dspy.primitives.repl_types import REPLHistory

from fleet_rlm.testing import (
    FakeLMServer,
    FakeResponse,
    dspy_fields,
    is_adapter_request,
    is_sub_lm_request,
    rlm_extract,
    rlm_step,
    rlm_submit,
    sub_lm_rule,
)


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer() as server:
        yield server


def test_dspy_lm_native_engine(lm: FakeLMServer) -> None:
    lm.push("hello from the fake")
    client = dspy.LM(model=lm.model, api_base=lm.base_url, api_key="fake", cache=False)
    assert client("hello") == ["hello from the fake"]
    request = lm.last_request
    assert request is not None
    assert request.path == "/v1/chat/completions"
    assert request.model == "fake-model"
    assert request.messages == [{"role": "user", "content": "hello"}]


def test_dspy_lm_through_litellm(lm: FakeLMServer) -> None:
    lm.push("via litellm")
    client = lm.dspy_lm(engine="litellm")
    assert client("hello", temperature=0.3) == ["via litellm"]
    request = lm.last_request
    assert request is not None and request.model == "fake-model"
    assert request.json.get("temperature") == 0.3
    assert client.history[-1]["usage"]["completion_tokens"] > 0


def test_litellm_streaming_with_usage(lm: FakeLMServer) -> None:
    text = "streaming through litellm, chunk by chunk"
    lm.push(FakeResponse(text, stream_chunk_chars=4))
    stream = litellm.completion(
        model=lm.model,
        api_base=lm.base_url,
        api_key="fake",
        messages=[{"role": "user", "content": "stream please"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    pieces: list[str] = []
    usage = None
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        usage = getattr(chunk, "usage", None) or usage
    assert "".join(pieces) == text
    assert len(pieces) > 3
    assert usage is not None and usage.completion_tokens > 0
    request = lm.last_request
    assert request is not None and request.stream and request.include_usage


def test_predict_end_to_end(lm: FakeLMServer) -> None:
    lm.push(dspy_fields(answer="4"))
    with dspy.context(lm=lm.dspy_lm()):
        prediction = dspy.Predict("question -> answer")(question="What is 2 + 2?")
    assert prediction.answer == "4"
    request = lm.last_request
    assert request is not None and is_adapter_request(request)
    assert "What is 2 + 2?" in request.last_user_text


async def test_predict_async(lm: FakeLMServer) -> None:
    lm.push(dspy_fields(answer="async four"))
    with dspy.context(lm=lm.dspy_lm()):
        prediction = await dspy.Predict("question -> answer").acall(question="2 + 2?")
    assert prediction.answer == "async four"


def test_rate_limit_reaches_dspy_as_its_error(lm: FakeLMServer) -> None:
    lm.push(FakeResponse.rate_limited(retry_after=1))
    with pytest.raises(dspy.LMRateLimitError, match="Rate limit"):
        lm.dspy_lm()("hello")


def test_dspy_fields_formats_non_strings() -> None:
    text = dspy_fields(answer="x", items=[1, 2], meta={"a": True})
    assert text == (
        '[[ ## answer ## ]]\nx\n\n[[ ## items ## ]]\n[1, 2]\n\n[[ ## meta ## ]]\n{"a": true}\n\n[[ ## completed ## ]]'
    )
    signature = dspy.Signature("question -> answer: str, items: list[int], meta: dict[str, bool]")
    assert dspy.ChatAdapter().parse(signature, text) == {"answer": "x", "items": [1, 2], "meta": {"a": True}}


def test_rlm_helpers_parse_with_rlm_signatures() -> None:
    rlm = dspy.RLM("question -> answer")
    adapter = dspy.ChatAdapter()
    step = adapter.parse(rlm.generate_action.signature, rlm_step("Look first.", "print(question)"))
    assert step == {"reasoning": "Look first.", "code": "```python\nprint(question)\n```"}
    submit = adapter.parse(rlm.generate_action.signature, rlm_submit("Done.", answer="42"))
    assert submit["code"] == "```python\nSUBMIT(answer='42')\n```"
    assert adapter.parse(rlm.extract.signature, rlm_extract(answer="42")) == {"answer": "42"}


def test_sub_lm_rule_answers_llm_query_while_queue_drives_root_steps(lm: FakeLMServer) -> None:
    lm.add_rule(sub_lm_rule(lambda prompt: f"sub-answer to: {prompt}"))
    lm.push(rlm_step("Ask the sub-LM.", "print(llm_query('what is X?'))"))
    rlm = dspy.RLM("question -> answer")
    with dspy.context(lm=lm.dspy_lm()):
        action = rlm.generate_action(variables_info="question: str", repl_history=REPLHistory(), iteration="1/5")
        llm_query = rlm._make_llm_tools()["llm_query"]
        assert llm_query("what is X?") == "sub-answer to: what is X?"
        batched = rlm._make_llm_tools()["llm_query_batched"](["a", "b"])
    assert batched == ["sub-answer to: a", "sub-answer to: b"]
    assert action.code == "```python\nprint(llm_query('what is X?'))\n```"
    root, sub = lm.requests[0], lm.requests[1]
    assert is_adapter_request(root) and not is_sub_lm_request(root)
    assert is_sub_lm_request(sub) and sub.messages == [{"role": "user", "content": "what is X?"}]
    assert lm.pending == 0


async def test_streamify_streams_field_chunks(lm: FakeLMServer) -> None:
    lm.push(FakeResponse(dspy_fields(answer="streamed answer in many small pieces"), stream_chunk_chars=5))
    listener = dspy.streaming.StreamListener(signature_field_name="answer")
    program = dspy.streamify(dspy.Predict("question -> answer"), stream_listeners=[listener])
    chunks: list[str] = []
    final = None
    with dspy.context(lm=lm.dspy_lm()):
        async for item in program(question="q"):
            if isinstance(item, dspy.streaming.StreamResponse):
                chunks.append(item.chunk)
            elif isinstance(item, dspy.Prediction):
                final = item
    assert final is not None and final.answer == "streamed answer in many small pieces"
    assert len(chunks) > 3 and "".join(chunks).strip() == final.answer
    request = lm.last_request
    assert request is not None and request.stream and request.include_usage
