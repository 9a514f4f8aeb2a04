"""`ProcessRuntime` (FLEET_TURN_PROCESSES=N): turns run in spawned worker processes and stream back.

Checked: the same event stream as the in-process runtime, REPL state kept across a session's turns, cancel
forwarded, a resolved LM profile crossing as data (and a resolution failure keeping its code), and a worker that
dies mid-turn failing that turn with a code instead of hanging, the next turn getting a fresh worker.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvloop

from fleet_rlm.config import Settings
from fleet_rlm.llm.errors import ModelNotConfigured
from fleet_rlm.llm.profiles import resolve_profiles
from fleet_rlm.llm.provider import ProfilesProvider
from fleet_rlm.runtime.contracts import CancelToken, TurnRequest
from fleet_rlm.runtime.process import WORKER_DIED, ProcessRuntime
from fleet_rlm.runtime.turn import TurnRuntime
from fleet_rlm.testing.fake_lm_dspy import dspy_fields, rlm_step, rlm_submit
from fleet_rlm.testing.fake_lm_server import FakeLMServer
from tests.runtime.conftest import ListSink, assert_lifecycle, make_request, run


def _settings(data_dir: Path, lm: FakeLMServer) -> Settings:
    return Settings(
        data_dir=data_dir,
        lm_model=lm.model,
        lm_api_base=lm.base_url,
        lm_api_key="fake",
        lm_num_retries=0,
        sandbox_pool_size=0,
        sandbox_cell_timeout_s=30.0,
        max_iters=6,
        turn_timeout_s=120.0,
    )


@pytest.fixture(scope="module")
def proc_settings(tmp_path_factory: pytest.TempPathFactory, fake_lm: FakeLMServer) -> Settings:
    return _settings(tmp_path_factory.mktemp("proc") / "data", fake_lm)


@pytest.fixture(scope="module", params=["reader thread", "event loop"])
def processes(proc_settings: Settings, request: pytest.FixtureRequest) -> Iterator[ProcessRuntime]:
    """Without a loop a thread reads each worker's pipe; the server passes its loop (uvloop), which reads them."""
    if request.param == "reader thread":
        runtime = ProcessRuntime(proc_settings, processes=1)
        yield runtime
        runtime.shutdown()
        return
    loop = uvloop.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="test-loop", daemon=True)
    thread.start()
    runtime = ProcessRuntime(proc_settings, processes=1, loop=loop)
    yield runtime
    runtime.shutdown()
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def _worker_pid(runtime: ProcessRuntime) -> int:
    worker = runtime._worker(0)  # started by an earlier turn, or now (this test may run first)
    assert worker.process.pid is not None
    return worker.process.pid


def _without_usage(sink: ListSink) -> list[str]:
    return [t for t in sink.types() if t != "usage"]  # usage is also emitted on a timer: load-dependent


def test_same_events_as_in_process(processes: ProcessRuntime, proc_settings: Settings, lm: FakeLMServer) -> None:
    script = (rlm_step("Compute.", "x = 6 * 7\nprint(x)"), rlm_submit(answer="42"))
    local = TurnRuntime(proc_settings)
    try:
        lm.push(*script)
        expected, expected_sink = run(local, make_request(proc_settings, "compute", session_id="local"))
    finally:
        local.shutdown()
    lm.push(*script)
    result, sink = run(processes, make_request(proc_settings, "compute", session_id="remote"))
    assert (result.status, result.answer) == (expected.status, expected.answer) == ("succeeded", "42")
    assert _without_usage(sink) == _without_usage(expected_sink)
    assert_lifecycle(sink, "turn_finished")
    assert sink.of("output")[0].text.strip() == "42"
    assert result.usage["lm_calls"] == expected.usage["lm_calls"]


def test_session_keeps_repl_state(processes: ProcessRuntime, proc_settings: Settings, lm: FakeLMServer) -> None:
    lm.push(rlm_step("Keep.", "kept = 41"), rlm_submit(answer="kept"))
    assert run(processes, make_request(proc_settings, "keep", session_id="repl"))[0].answer == "kept"
    lm.push(rlm_step("Use.", "print(kept + 1)"), rlm_submit(answer="used"))
    result, sink = run(processes, make_request(proc_settings, "use", session_id="repl"))
    assert result.status == "succeeded"
    assert sink.of("output")[0].text.strip() == "42"


def test_the_workers_sandboxes_are_listed_counted_and_ended(
    processes: ProcessRuntime, proc_settings: Settings, lm: FakeLMServer
) -> None:
    """What the API's sandbox list, runtime status and session delete see: the sandboxes in the worker."""
    lm.push(rlm_step("Warm.", "x = 1"), rlm_submit(answer="warm"))
    assert run(processes, make_request(proc_settings, "warm", session_id="listed"))[0].status == "succeeded"
    leases = {lease.session_id: lease for lease in processes.pool.leases()}
    assert leases["listed"].alive and not leases["listed"].busy and leases["listed"].workspace_id == "w1"
    assert processes.pool.stats()["idle"] >= 1
    processes.pool.end_session("listed")
    deadline = time.monotonic() + 10
    while "listed" in {lease.session_id for lease in processes.pool.leases()} and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "listed" not in {lease.session_id for lease in processes.pool.leases()}


def test_prepare_starts_the_sessions_sandbox_in_its_worker_before_the_turn(
    processes: ProcessRuntime, proc_settings: Settings, lm: FakeLMServer
) -> None:
    """What TurnService does for an rlm turn: the sandbox starts in the session's worker first, and the turn
    then runs in that same sandbox (its start time is the prepared one)."""
    processes.prepare("prepared", "w1")
    deadline = time.monotonic() + 15
    while "prepared" not in {lease.session_id for lease in processes.pool.leases()}:
        assert time.monotonic() < deadline, "the prepared sandbox never appeared"
        time.sleep(0.02)
    before = {lease.session_id: lease for lease in processes.pool.leases()}["prepared"]
    assert before.alive and not before.busy and before.workspace_id == "w1"
    lm.push(rlm_step("Use it.", "print(6 * 7)"), rlm_submit(answer="42"))
    result, sink = run(processes, make_request(proc_settings, "use", session_id="prepared"))
    assert result.status == "succeeded" and sink.of("output")[0].text.strip() == "42"
    after = {lease.session_id: lease for lease in processes.pool.leases()}["prepared"]
    assert after.started_at == before.started_at  # the prepared worker, not a second one


def test_worker_log_records_reach_this_processs_handlers(
    processes: ProcessRuntime, proc_settings: Settings, lm: FakeLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A turn that fails logs in the worker; the record (its traceback included) is handled here, where the
    server's log file is, and the worker writes nothing to the terminal."""
    lm.push(rlm_step("Fail.", "x = 1"))  # then the fake LM has nothing left: the turn fails
    with caplog.at_level("WARNING"):
        result, _ = run(processes, make_request(proc_settings, "fail", session_id="logged"))
    assert result.status == "failed"
    worker_pid = _worker_pid(processes)
    records = [r for r in caplog.records if r.process == worker_pid]
    failed = [r for r in records if r.name == "fleet_rlm.runtime.turn" and r.levelname == "WARNING"]
    assert failed and "failed" in failed[0].getMessage()
    assert failed[0].exc_text and "Traceback" in failed[0].exc_text  # the worker's traceback, as text


def test_cancel_is_forwarded(processes: ProcessRuntime, proc_settings: Settings, lm: FakeLMServer) -> None:
    lm.push(rlm_step("Busy.", "import time\nstarted = 1\ntime.sleep(60)"), rlm_submit(answer="never"))
    sink, cancel = ListSink(), CancelToken()

    def stop_when_running() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "code" not in sink.types():
            time.sleep(0.05)
        time.sleep(0.3)
        cancel.cancel("user pressed stop")

    threading.Thread(target=stop_when_running, daemon=True).start()
    result = processes.run_turn(make_request(proc_settings, "busy", session_id="cancel"), sink, cancel)
    assert result.status == "cancelled"
    assert_lifecycle(sink, "turn_cancelled")
    assert sink.of("turn_cancelled")[0].reason == "user pressed stop"


def test_resolved_profiles_cross_as_data(processes: ProcessRuntime, proc_settings: Settings, lm: FakeLMServer) -> None:
    provider = ProfilesProvider(lambda: resolve_profiles(proc_settings), proc_settings)
    lm.push(dspy_fields(reasoning="easy", answer="4"))
    request = make_request(proc_settings, "2+2?", mode="direct", session_id="profiles")
    result, _ = run(processes, TurnRequest(**{**request.__dict__, "lm_provider": provider}))
    assert (result.status, result.answer) == ("succeeded", "4")

    def refuse() -> dict:  # type: ignore[type-arg]
        raise ModelNotConfigured("root")

    refused = TurnRequest(**{**request.__dict__, "lm_provider": ProfilesProvider(refuse, proc_settings)})
    result, sink = run(processes, refused)
    assert result.status == "failed" and result.error is not None
    assert result.error["code"] == ModelNotConfigured("root").code
    assert_lifecycle(sink, "turn_failed")


def test_dead_worker_fails_the_turn_with_a_code(
    processes: ProcessRuntime, proc_settings: Settings, lm: FakeLMServer
) -> None:
    lm.push(rlm_step("Busy.", "import time\ntime.sleep(60)"), rlm_submit(answer="never"))
    sink = ListSink()
    pid = _worker_pid(processes)

    def kill_when_running() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "code" not in sink.types():
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)

    threading.Thread(target=kill_when_running, daemon=True).start()
    result = processes.run_turn(make_request(proc_settings, "busy", session_id="doomed"), sink, CancelToken())
    assert result.status == "failed" and result.error is not None and result.error["code"] == WORKER_DIED
    assert sink.types()[-2:] == ["error", "turn_failed"]
    assert sink.of("turn_failed")[0].code == WORKER_DIED

    lm.reset()  # the killed turn's unused script step
    lm.push(dspy_fields(reasoning="fine", answer="back"))  # the next turn gets a fresh worker
    result, _ = run(processes, make_request(proc_settings, "again", mode="direct", session_id="doomed"))
    assert (result.status, result.answer) == ("succeeded", "back")
    assert _worker_pid(processes) != pid


def test_outbox_delivers_every_message_once_in_order_under_contention() -> None:
    """Sixteen threads send at once through one Outbox while the reader is slow, so writers find the lock
    taken and leave their messages to the writing thread: each arrives once, in its thread's order."""
    from multiprocessing import Pipe

    from fleet_rlm.runtime.process_worker import Outbox

    reader, writer = Pipe(duplex=False)
    outbox = Outbox(writer)
    threads, per_thread = 16, 200
    received: list[tuple[str, str, int]] = []
    batches = 0

    def read() -> None:
        nonlocal batches
        while len(received) < threads * per_thread:
            batch = reader.recv()
            batches += 1
            received.extend(batch)
            time.sleep(0.0005)  # a slow API-side reader: the pipe fills and writes wait

    def send(name: str) -> None:
        for i in range(per_thread):
            outbox.send(("event", name, i))

    consumer = threading.Thread(target=read)
    consumer.start()
    senders = [threading.Thread(target=send, args=(f"t{n}",)) for n in range(threads)]
    for thread in senders:
        thread.start()
    for thread in senders:
        thread.join()
    consumer.join(timeout=30)
    assert not consumer.is_alive(), f"{threads * per_thread - len(received)} messages never arrived"
    for n in range(threads):
        assert [i for _, name, i in received if name == f"t{n}"] == list(range(per_thread))
    assert batches < threads * per_thread  # writers took others' messages along
    assert not outbox.queued


def test_outbox_survives_a_closed_pipe() -> None:
    from multiprocessing import Pipe

    from fleet_rlm.runtime.process_worker import Outbox

    reader, writer = Pipe(duplex=False)
    reader.close()
    outbox = Outbox(writer)
    outbox.send(("event", "k", 1))  # the API process is gone: dropped, not raised
    writer.close()
    outbox.send(("event", "k", 2))
    assert not outbox.queued


def test_outbox_drops_only_a_message_that_cannot_cross() -> None:
    """A message that does not pickle (a lambda in a payload) is dropped alone: the rest of its batch arrives."""
    from multiprocessing import Pipe

    from fleet_rlm.runtime.process_worker import Outbox

    reader, writer = Pipe(duplex=False)
    outbox = Outbox(writer)
    outbox.queued.extend([("event", "k", 1), ("event", "k", lambda: None)])  # queued while another thread wrote
    outbox.send(("event", "k", 3))
    received = []
    while reader.poll(1):
        received.extend(reader.recv())
    assert [payload for _, _, payload in received] == [1, 3]
