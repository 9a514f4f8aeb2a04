"""The session-command channel under stress: frames larger than one stdin request, a cell that ignores the
interrupt (the worker's process session is deleted and the sandbox replaced), pooled session leases, status."""

from __future__ import annotations

from pathlib import Path

import pytest
from dspy.primitives.code_interpreter import CodeExecutionError

from fleet_rlm.config import Settings
from fleet_rlm.sandbox import SandboxOptions, SandboxPool, backend_status
from fleet_rlm.sandbox.daytona import DaytonaBackend
from fleet_rlm.sandbox.factory import interpreter_factory
from fleet_rlm.testing.fake_daytona import FakeDaytonaServer
from tests.sandbox.daytona.fixtures import daytona_options


def _input_posts(fake: FakeDaytonaServer) -> int:
    return sum(1 for c in fake.calls if c.method == "POST" and c.path.endswith("/input"))


def test_large_frames_span_several_stdin_requests(fake_daytona: FakeDaytonaServer, tmp_path: Path) -> None:
    backend = DaytonaBackend(daytona_options(fake_daytona, max_post_bytes=64 * 1024))
    try:
        interp = interpreter_factory(backend, data_dir=tmp_path)()
        interp.execute("1")
        before = _input_posts(fake_daytona)
        context = "".join(chr(0x41 + i % 26) for i in range(600_000)) + "é✓"
        assert interp.execute("print(len(context), context[-3:])", {"context": context}) == "600002 Xé✓"
        assert _input_posts(fake_daytona) - before >= 10  # ~800 KB of base64 in 64 KB requests
        out = interp.execute("print(len(repr(list(range(200_000)))))")
        assert out == str(len(repr(list(range(200_000)))))
        interp.shutdown()
    finally:
        backend.shutdown()


def test_cell_ignoring_the_interrupt_is_killed_and_sandbox_replaced(
    fake_daytona: FakeDaytonaServer, daytona_backend: DaytonaBackend, tmp_path: Path
) -> None:
    factory = interpreter_factory(daytona_backend, data_dir=tmp_path, cell_timeout_s=1.0, interrupt_grace_s=0.5)
    interp = factory()
    interp.execute("state = 1")
    (first,) = fake_daytona.state.sandboxes
    stubborn = (
        "import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass"
    )
    with pytest.raises(CodeExecutionError, match=r"\[sandbox reset\].*did not stop"):
        interp.execute(stubborn)
    assert interp.execute("print('state' in globals())") == "False"
    assert list(fake_daytona.state.sandboxes) != [first] and len(fake_daytona.state.sandboxes) == 1
    interp.shutdown()
    assert fake_daytona.state.sandboxes == {}


def test_pool_keeps_a_session_worker_across_turns(
    fake_daytona: FakeDaytonaServer, daytona_backend: DaytonaBackend, tmp_path: Path
) -> None:
    options = SandboxOptions(data_dir=tmp_path, cell_timeout_s=10)
    pool = SandboxPool(options, backend=daytona_backend, size=2)
    try:
        assert pool.size == 0  # the backend keeps no spares: a spare would be a billed, idle sandbox
        factory = interpreter_factory(pool=pool, session_id="s1")
        assert factory.backend is daytona_backend and "Daytona cloud sandbox" in factory.execution_instructions
        turn1 = factory()
        turn1.execute("memo = 'turn one'")
        turn1.shutdown()
        turn2 = factory()
        assert turn2.execute("print(memo)") == "turn one"
        turn2.shutdown()
        child = factory.child()()
        assert child.execute("print('memo' in globals())") == "False"
        child.shutdown()
    finally:
        pool.shutdown()
    assert daytona_backend.status()["workers"] == 0
    # The session's sandbox was labelled for it and is kept for reuse; the child's was deleted when it ended.
    labels = [(r.labels["role"], r.labels.get("session")) for r in fake_daytona.state.sandboxes.values()]
    assert labels == [("root", "s1")]


def test_status_reports_configuration_without_network(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path, daytona_api_key="k", daytona_api_url="http://127.0.0.1:9/api", daytona_network_block_all=True
    )
    status = backend_status(settings.model_copy(update={"sandbox_backend": "daytona"}))
    assert status["backend"] == "daytona" and status["configured"] is True and status["network"] == "blocked"
    assert status["usable"] is True and status["isolation"] == "daytona"
    unset = backend_status(Settings(data_dir=tmp_path, sandbox_backend="daytona"))
    assert unset["configured"] is False and unset["usable"] is False
    assert backend_status(Settings(data_dir=tmp_path))["backend"] == "local"
