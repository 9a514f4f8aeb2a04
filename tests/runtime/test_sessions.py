"""Sessions across turns: history, REPL state, memory surviving a sandbox replacement, artifacts, concurrency,
one active turn per session, and the max_iters budget."""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading

import pytest

from fleet_rlm.config import Settings
from fleet_rlm.runtime.contracts import CancelToken, HistoryTurn
from fleet_rlm.runtime.errors import TurnAlreadyRunning
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.testing.fake_lm_dspy import dspy_fields, rlm_extract, rlm_step, rlm_submit
from fleet_rlm.testing.fake_lm_server import FakeLMServer
from fleet_rlm.testing.fake_lm_types import RecordedRequest
from tests.runtime.conftest import ListSink, assert_lifecycle, make_request, run


def test_three_turns_see_history(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> None:
    history: list[HistoryTurn] = []
    for turn, (question, answer) in enumerate(
        [("My name is Ada.", "Hi Ada"), ("I like tea.", "Noted"), ("Recap?", "Ada, tea")]
    ):
        lm.push(dspy_fields(reasoning=f"turn {turn}", answer=answer))
        request = make_request(settings, question, mode="direct")
        request = type(request)(**{**request.__dict__, "history": tuple(history)})
        result, _ = run(runtime, request)
        assert result.answer == answer
        history.append(HistoryTurn(user_message=question, answer=answer))
    last_prompt = lm.requests[-1].text
    assert "My name is Ada." in last_prompt and "Hi Ada" in last_prompt and "I like tea." in last_prompt


def test_memory_survives_sandbox_replacement(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> None:
    lm.push(
        rlm_step("Remember.", "open(MEMORY_DIR + '/MEMORIES.md', 'a').write('- favourite colour: teal\\n')\nx = 1"),
        rlm_submit(answer="remembered"),
    )
    result, sink = run(runtime, make_request(settings, "remember teal"))
    assert result.answer == "remembered"
    assert sink.of("memory_updated") and sink.of("memory_updated")[0].path == "memory/MEMORIES.md"

    lm.push(dspy_fields(reasoning="chat", answer="sure"))
    assert run(runtime, make_request(settings, "small talk", mode="direct"))[0].answer == "sure"

    runtime.pool.end_session("s1")  # the session's worker is gone: REPL state lost, files kept
    lm.push(
        rlm_step("Recall.", "print('x' in globals())\nprint(open(MEMORY_DIR + '/MEMORIES.md').read())"),
        rlm_submit(answer="teal"),
    )
    result, sink = run(runtime, make_request(settings, "what colour?"))
    output = sink.of("output")[0].text
    assert output.startswith("False") and "favourite colour: teal" in output
    assert result.answer == "teal"


def test_artifacts_are_detected(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> None:
    lm.push(
        rlm_step("Write a file.", "open(ARTIFACTS_DIR + '/report.csv', 'w').write('a,b\\n1,2\\n')"),
        rlm_submit(answer="saved"),
    )
    result, sink = run(runtime, make_request(settings, "make a report"))
    assert result.status == "succeeded"
    (artifact,) = sink.of("artifact_created")
    assert artifact.name == "report.csv" and artifact.path == "artifacts/report.csv"
    assert artifact.size_bytes == 8 and artifact.media_type == "text/csv"
    assert artifact.sha256 == hashlib.sha256(b"a,b\n1,2\n").hexdigest()
    types = sink.types()
    assert types.index("artifact_created") < types.index("final")


def test_max_iters_ends_with_extracted_partial_answer(
    runtime: TurnRuntime, settings: Settings, lm: FakeLMServer
) -> None:
    lm.push(
        rlm_step("Step one.", "print(1)"),
        rlm_step("Step two.", "print(2)"),
        rlm_extract(answer="best guess"),
    )
    result, sink = run(runtime, make_request(settings, "never finishes", max_iters=2))
    assert result.status == "succeeded" and result.answer == "best guess"
    (exhausted,) = sink.of("budget_exhausted")
    assert exhausted.budget == "max_iters" and exhausted.limit == 2 and exhausted.used == 2
    assert (result.outcome, result.stop_reason) == ("partial", "max_iters")
    assert sink.of("turn_finished")[0].outcome == "partial"
    assert_lifecycle(sink, "turn_finished")


def test_two_sessions_run_concurrently(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> None:
    both_waiting = asyncio.Event()
    seen: set[str] = set()
    steps: dict[str, int] = {}

    async def rule(request: RecordedRequest) -> str | None:
        match = re.search(r"Preview:\s*```\s*(alpha|beta)", request.last_user_text)
        if match is None:
            return None
        name = match.group(1)
        steps[name] = steps.get(name, 0) + 1
        if steps[name] == 1:  # each session's first call waits until the other session's arrived too
            seen.add(name)
            if len(seen) == 2:
                both_waiting.set()
            await asyncio.wait_for(both_waiting.wait(), timeout=20)
            return rlm_step("Compute.", f"value = '{name}-' + str(len(task))")
        return rlm_step("Done.", "SUBMIT(answer=value)")

    lm.add_rule(rule)
    results: dict[str, str] = {}

    def session(name: str) -> None:
        request = make_request(settings, name, session_id=f"session-{name}", workspace_id=f"ws-{name}")
        results[name] = run(runtime, request)[0].answer

    threads = [threading.Thread(target=session, args=(name,)) for name in ("alpha", "beta")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert results == {"alpha": "alpha-5", "beta": "beta-4"}


def test_one_active_turn_per_session(runtime: TurnRuntime, settings: Settings, lm: FakeLMServer) -> None:
    lm.push(rlm_step("Wait.", "import time\ntime.sleep(30)"))
    first = make_request(settings, "busy")
    sink, cancel = ListSink(), CancelToken()
    thread = threading.Thread(target=runtime.run_turn, args=(first, sink, cancel))
    thread.start()
    try:
        for _ in range(400):
            if "code" in sink.types():
                break
            threading.Event().wait(0.025)
        with pytest.raises(TurnAlreadyRunning) as info:
            runtime.run_turn(make_request(settings, "second"), ListSink(), CancelToken())
        assert info.value.run_id == first.run_id and info.value.code == "turn_already_running"
        assert runtime.gate.running("s1") == first.run_id
    finally:
        cancel.cancel()
        thread.join(timeout=30)
    assert runtime.gate.running("s1") is None
