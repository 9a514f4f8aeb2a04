"""Record an rlm turn (sub-LM batch, parallel children) through its sink, then replay it with the LM server
stopped: identical with the same programs, the first divergent request with another instruction text."""

from __future__ import annotations

import threading
import uuid
from typing import Any

from fleet_rlm.config import Settings
from fleet_rlm.runtime.contracts import CancelToken, TurnRequest
from fleet_rlm.runtime.lm_exchange import LMExchange, RecordingDone, TurnInputs
from fleet_rlm.runtime.programs import RLM_TASK, BuiltinPrograms, ProgramSpec
from fleet_rlm.runtime.replay_inputs import RecordedInputs
from fleet_rlm.runtime.replay_lm import ReplayBook, ReplayProvider
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.testing.fake_lm_dspy import rlm_step, rlm_submit
from fleet_rlm.testing.fake_lm_rules import sub_lm_rule
from fleet_rlm.testing.fake_lm_server import FakeLMServer
from tests.runtime.conftest import ListSink, make_request
from tests.runtime.test_recursion import child_rule

SECRET = "sk-test-SECRET-0123456789abcdef"


class RecordingSink(ListSink):
    def __init__(self) -> None:
        super().__init__()
        self.items: list[Any] = []
        self._items_lock = threading.Lock()

    def record_lm(self, item: Any) -> None:
        with self._items_lock:
            self.items.append(item)

    def exchanges(self) -> list[LMExchange]:
        return [i for i in self.items if isinstance(i, LMExchange)]


class OtherTask(BuiltinPrograms):
    def get(self, module: str, version: str | None = None) -> ProgramSpec | None:
        if module == RLM_TASK and version == "v2":
            return ProgramSpec(module, "v2", "Solve the task. Be terse.")
        return super().get(module, None if version == "v2" else version)


def record_run(settings: Settings) -> tuple[RecordingSink, Any]:
    with FakeLMServer() as lm:
        lm.add_rule(child_rule(grandchild=False))
        lm.add_rule(sub_lm_rule(lambda prompt: f"echo:{prompt[-5:]}"))
        lm.push(
            rlm_step("Ask sub-LMs.", "res = llm_query_batched(['one', 'two', 'three'])\nprint(res)"),
            rlm_step("Delegate.", "kids = rlm_query_batched(['child task 0', 'child task 1'])\nprint(kids)"),
            rlm_submit(answer="done"),
        )
        runtime = TurnRuntime(settings, lm_provider={"root": lm.dspy_lm(api_key=SECRET)})
        try:
            sink = RecordingSink()
            result = runtime.run_turn(make_request(settings, "record me", batch_concurrency=3), sink, CancelToken())
        finally:
            runtime.shutdown()
        assert result.status == "succeeded" and result.answer == "done", result
        assert len(lm.requests) == len(sink.exchanges())
    return sink, result


def replay(settings: Settings, sink: RecordingSink, **request_fields: Any) -> tuple[ReplayBook, Any]:
    cancel = CancelToken()
    book = ReplayBook(sink.exchanges(), cancel)
    (raw,) = [i.inputs for i in sink.items if isinstance(i, TurnInputs)]
    inputs = RecordedInputs.parse(raw, run_id="r1")
    runtime = TurnRuntime(settings, lm_provider=ReplayProvider(book, inputs.models()), programs=OtherTask())
    fields: dict[str, Any] = {
        "run_id": uuid.uuid4().hex,
        "session_id": "replay-" + uuid.uuid4().hex[:8],
        "user_id": "u1",
        "workspace_id": "replay-" + uuid.uuid4().hex[:8],
        "workspace_dir": settings.workspaces_dir / "replay",
    }
    request: TurnRequest = inputs.request(sources=tuple(inputs.sources), **fields)
    if request_fields:
        from dataclasses import replace

        request = replace(request, **request_fields)
    try:
        result = runtime.run_turn(request, ListSink(), cancel)
    finally:
        runtime.shutdown()
    return book, result


def test_recorded_rlm_run_replays_identically_offline(settings: Settings) -> None:
    sink, recorded = record_run(settings)  # the fake LM server is stopped when this returns
    exchanges = sink.exchanges()
    roles = [e.role for e in exchanges]
    assert roles.count("sub") == 3 and roles.count("delegate") >= 2 and roles.count("root") == 3
    children = {f"child:{s.child_id}" for s in sink.of("child_start")}
    assert len(children) == 2 and {e.actor for e in exchanges if e.role == "delegate"} == children
    assert {e.actor for e in exchanges if e.role != "delegate"} == {"root"}
    assert len({e.seq for e in exchanges}) == len(exchanges)
    done = [i for i in sink.items if isinstance(i, RecordingDone)]
    assert done and done[0].calls == len(exchanges) and not done[0].truncated and done[0].answer == "done"
    dumped = repr(sink.items)
    assert SECRET not in dumped and "api_key" not in dumped and "api_base" not in dumped

    book, result = replay(settings, sink)
    assert book.finish() is None, book.divergence
    assert result.status == "succeeded" and result.answer == recorded.answer
    assert book.calls == len(exchanges)
    assert result.usage["lm_calls"] == recorded.usage["lm_calls"]


def test_changed_program_version_reports_first_divergent_request(settings: Settings) -> None:
    sink, _recorded = record_run(settings)
    book, result = replay(settings, sink, program_versions={RLM_TASK: "v2"})
    divergence = book.finish()
    assert divergence is not None and divergence.reason == "unrecorded_request"
    assert divergence.role == "root" and divergence.index == 1 and divergence.role_index == 1
    assert divergence.recorded_seq == 1
    lines = divergence.diff.splitlines()
    assert lines[:2] == ["--- recorded #1", "+++ replayed"]
    assert any(line.startswith("+") and "Solve the task. Be terse." in line for line in lines)
    assert any(line.startswith("-") and "Complete the user's task." in line for line in lines)
    assert result.status == "cancelled"


def test_key_echoed_in_a_prompt_is_scrubbed(settings: Settings, lm: FakeLMServer) -> None:
    from fleet_rlm.testing.fake_lm_dspy import dspy_fields

    lm.push(dspy_fields(reasoning=f"you said {SECRET}", answer=f"key {SECRET}"))
    runtime = TurnRuntime(settings, lm_provider={"root": lm.dspy_lm(api_key=SECRET)})
    try:
        sink = RecordingSink()
        result = runtime.run_turn(make_request(settings, f"repeat {SECRET}", mode="direct"), sink, CancelToken())
    finally:
        runtime.shutdown()
    assert result.status == "succeeded" and lm.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    (exchange,) = sink.exchanges()
    assert SECRET not in repr(sink.items) and "[REDACTED]" in repr(exchange.request)
    assert "[REDACTED]" in repr(exchange.response)


def test_over_budget_exchanges_keep_only_their_hash(settings: Settings, lm: FakeLMServer) -> None:
    from fleet_rlm.testing.fake_lm_dspy import dspy_fields

    tiny = settings.model_copy(update={"recording_max_bytes": 10})
    lm.push(dspy_fields(reasoning="r", answer="a"))
    runtime = TurnRuntime(tiny, lm_provider={"root": lm.dspy_lm()})
    try:
        sink = RecordingSink()
        runtime.run_turn(make_request(tiny, "hi", mode="direct"), sink, CancelToken())
    finally:
        runtime.shutdown()
    (exchange,) = sink.exchanges()
    assert exchange.truncated and exchange.request is None and exchange.response is None
    assert len(exchange.request_hash) == 64
    book, result = replay(tiny, sink)
    divergence = book.finish()
    assert divergence is not None and divergence.reason == "not_stored" and divergence.recorded_seq == 1
    assert result.status == "cancelled"


def test_a_replay_that_stops_early_reports_the_first_missing_call() -> None:
    def exchange(seq: int, digest: str) -> LMExchange:
        return LMExchange(seq, "sub", "root", 0, digest, {"messages": []}, {"outputs": ["x"]})

    book = ReplayBook([exchange(1, "a" * 64), exchange(2, "b" * 64)], CancelToken())
    divergence = book.finish()
    assert divergence is not None and divergence.reason == "missing_calls" and divergence.recorded_seq == 1
    assert "the run made 2" in divergence.diff


def test_recording_off_records_nothing(settings: Settings, lm: FakeLMServer) -> None:
    from fleet_rlm.testing.fake_lm_dspy import dspy_fields

    off = settings.model_copy(update={"recording_enabled": False})
    lm.push(dspy_fields(reasoning="r", answer="a"))
    runtime = TurnRuntime(off, lm_provider={"root": lm.dspy_lm()})
    try:
        sink = RecordingSink()
        result = runtime.run_turn(make_request(off, "hi", mode="direct"), sink, CancelToken())
    finally:
        runtime.shutdown()
    assert result.status == "succeeded" and sink.items == []


def test_lm_identity_reads_what_the_lm_presents() -> None:
    """The identity a replay presents: one capability lookup for a plain dspy.LM gives exactly what its four
    properties say one by one, and a subclass that overrides a property is read through that property."""
    import dspy

    from fleet_rlm.runtime.lm_exchange import lm_identity

    for model in ("openai/gpt-4o-mini", "openai/not-a-listed-model", "anthropic/claude-3-5-sonnet-20241022"):
        lm = dspy.LM(model, api_base="http://127.0.0.1:9/v1", api_key="fake", cache=False)
        assert lm_identity(lm) == {
            "model": model,
            "model_type": "chat",
            "supports_function_calling": lm.supports_function_calling,
            "supports_reasoning": lm.supports_reasoning,
            "supports_response_schema": lm.supports_response_schema,
            "supported_params": sorted(lm.supported_params),
        }
    assert lm_identity(dspy.LM("openai/gpt-4o-mini"))["supports_function_calling"] is True

    class ToolsEverywhere(dspy.LM):
        @property
        def supports_function_calling(self) -> bool:
            return True

    custom = ToolsEverywhere("openai/not-a-listed-model", api_key="fake")
    assert lm_identity(custom)["supports_function_calling"] is True
    assert lm_identity(custom)["supported_params"] == sorted(custom.supported_params)


HEADER_WORD = "workspace_id"  # a header value that is also a key of every recording's inputs


def test_the_scrubber_redacts_secret_values_and_never_a_key(settings: Settings, lm: FakeLMServer) -> None:
    """Secrets are redacted inside string values only: every key of the recording stays, a header value that
    reads like a key edits nothing structural, and words that only look secret stay in the user's text."""
    from fleet_rlm.runtime.contracts import ContextSource
    from fleet_rlm.runtime.recording import LMRecorder
    from fleet_rlm.testing.fake_lm_dspy import dspy_fields

    notes = settings.workspaces_dir / "w1" / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    (notes / f"{HEADER_WORD}.md").write_text("plain notes\n")
    lm.push(dspy_fields(reasoning=f"you said {SECRET}", answer="your api_key and token words are fine"))
    lm_with_header = lm.dspy_lm(api_key=SECRET, extra_headers={"X-Tag": HEADER_WORD})
    runtime = TurnRuntime(settings, lm_provider={"root": lm_with_header})
    task = f"my api_key, bearer token and password are words; the real key is {SECRET}"
    path = f"notes/{HEADER_WORD}.md"
    source = ContextSource(kind="path", name=path, path=path)
    try:
        sink = RecordingSink()
        result = runtime.run_turn(make_request(settings, task, mode="direct", sources=(source,)), sink, CancelToken())
    finally:
        runtime.shutdown()
    assert result.status == "succeeded", result.error
    assert lm.requests[0].headers["x-tag"] == HEADER_WORD  # the header was sent: it is one of the LM's secrets

    (inputs,) = [i.inputs for i in sink.items if isinstance(i, TurnInputs)]
    assert set(inputs) == {
        "task", "options", "sources", "history", "session_summary", "program_versions", "session_id",
        "workspace_id", "lm_models",
    }  # fmt: skip
    assert inputs["workspace_id"] == "w1" and inputs["sources"][0]["path"] == path  # structure as it was
    assert inputs["task"] == task.replace(SECRET, "[REDACTED]")  # the key redacted, the secret-looking words kept
    assert RecordedInputs.parse(inputs, run_id="r1").sources[0].path == path  # and it validates for a replay
    (exchange,) = sink.exchanges()
    assert exchange.request is not None and set(exchange.request) == {"model", "model_type", "messages", "params"}
    prompt = repr(exchange.request["messages"])
    assert SECRET not in prompt and "my api_key, bearer token and password are words" in prompt
    (done,) = [i for i in sink.items if isinstance(i, RecordingDone)]
    assert done.answer == "your api_key and token words are fine"
    assert SECRET not in repr(sink.items)

    recorder = LMRecorder(lambda item: None, 1 << 20, secrets={SECRET, HEADER_WORD})
    value = {HEADER_WORD: "w1", "nested": {HEADER_WORD: [f"a {SECRET} b", HEADER_WORD, 3]}, "n": 3}
    assert recorder.scrub(value) == {
        HEADER_WORD: "w1",
        "nested": {HEADER_WORD: ["a [REDACTED] b", "[REDACTED]", 3]},
        "n": 3,
    }


def test_a_replay_runs_in_a_turn_worker_process(settings: Settings, lm: FakeLMServer) -> None:
    """The replay's recorded responses cross to the worker as data: the worker's book serves every call (the
    outcome names the worker's pid, not this process's), and a divergence found there comes back with the diff."""
    import os
    from dataclasses import replace

    from fleet_rlm.runtime.process import ProcessRuntime
    from fleet_rlm.testing.fake_lm_dspy import dspy_fields

    lm.push(dspy_fields(reasoning="r", answer="recorded answer"))
    recording = TurnRuntime(settings, lm_provider={"root": lm.dspy_lm()})
    try:
        sink = RecordingSink()
        recorded = recording.run_turn(make_request(settings, "answer me", mode="direct"), sink, CancelToken())
    finally:
        recording.shutdown()
    assert recorded.status == "succeeded" and recorded.answer == "recorded answer"
    (raw,) = [i.inputs for i in sink.items if isinstance(i, TurnInputs)]
    inputs = RecordedInputs.parse(raw, run_id="r1")
    sent = len(lm.requests)

    workers = ProcessRuntime(settings, processes=1)
    try:

        def replay_in_worker(task: str | None = None) -> tuple[ReplayProvider, Any]:
            cancel = CancelToken()
            provider = ReplayProvider(ReplayBook(sink.exchanges(), cancel), inputs.models())
            session = "replay-" + uuid.uuid4().hex[:8]
            request = inputs.request(
                sources=(),
                run_id=uuid.uuid4().hex,
                session_id=session,
                user_id="u1",
                workspace_id=session,
                workspace_dir=settings.workspaces_dir / session,
                lm_provider=provider,
            )
            return provider, workers.run_turn(replace(request, task=task) if task else request, ListSink(), cancel)

        same, result = replay_in_worker()
        assert result.status == "succeeded" and result.answer == "recorded answer"
        assert same.book.adopted is not None and same.book.finish() is None and same.book.calls == 1
        worker_pid = workers._worker(0).process.pid
        assert same.book.adopted.pid == worker_pid and worker_pid != os.getpid()

        other, result = replay_in_worker(task="another task")
        divergence = other.book.finish()
        assert divergence is not None and divergence.reason == "unrecorded_request" and divergence.index == 1
        assert "+another task" in divergence.diff and other.book.adopted is not None
        assert result.status == "cancelled"  # the worker's book cancelled the worker's turn
    finally:
        workers.shutdown()
    assert len(lm.requests) == sent  # no replayed call reached the model
