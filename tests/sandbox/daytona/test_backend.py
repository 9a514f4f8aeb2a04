"""Daytona backend policy against the fake server: sandbox parameters, labels and reuse, the volume, child
sandboxes, cleanup, and user-facing failures."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from dspy.primitives.code_interpreter import CodeInterpreterError

from fleet_rlm.sandbox.daytona import DaytonaBackend, worker_version
from fleet_rlm.sandbox.daytona.options import WORKER_FILES
from fleet_rlm.sandbox.factory import InterpreterFactory, interpreter_factory
from fleet_rlm.testing.fake_daytona import FakeDaytonaServer
from tests.sandbox.daytona.fixtures import daytona_options


def _factory(backend: DaytonaBackend, tmp_path: Path, **kwargs: object) -> InterpreterFactory:
    factory = interpreter_factory(backend, data_dir=tmp_path / "data", cell_timeout_s=10, **kwargs)
    assert factory.backend is backend and factory.isolation == "daytona"
    return factory


def _creates(fake: FakeDaytonaServer) -> int:
    return sum(1 for c in fake.calls if c.method == "POST" and c.path == "/api/sandbox")


def _uploads(fake: FakeDaytonaServer) -> int:
    return sum(1 for c in fake.calls if c.path.endswith("/files/bulk-upload"))


def test_sandbox_parameters_labels_volume_and_network(fake_daytona: FakeDaytonaServer, tmp_path: Path) -> None:
    options = daytona_options(
        fake_daytona, network_allow_list="10.0.0.0/8", auto_stop_minutes=7, auto_delete_minutes=30, volume="vol-a"
    )
    backend = DaytonaBackend(options)
    try:
        interp = _factory(backend, tmp_path, session_id="s1", workspace_id="w1")()
        assert interp.execute("print(WORKSPACE_ROOT, sorted(os.listdir()) if (os := __import__('os')) else 0)") == (
            "/workspace ['artifacts', 'buffers', 'memory', 'meta']"
        )
        (record,) = fake_daytona.state.sandboxes.values()
        expected = {"fleet-rlm": "1", "workspace": "w1", "role": "root", "session": "s1"}
        assert {k: v for k, v in record.labels.items() if k in expected or k == "parent"} == expected
        assert record.snapshot == "fleet-rlm-worker" and record.env["WORKSPACE_ROOT"] == "/workspace"
        assert (record.network_block_all, record.network_allow_list) == (False, "10.0.0.0/8")
        assert (record.auto_stop_interval, record.auto_delete_interval) == (7, 30)
        assert record.volumes[0]["mountPath"] == "/workspace" and record.volumes[0]["subpath"] == "workspaces/w1"
        volume = fake_daytona.state.volume("vol-a")
        assert (volume.host_dir / "workspaces/w1/memory/MEMORIES.md").read_text().startswith("# Memories")
        interp.shutdown()
        assert _factory(backend, tmp_path).status()["network"] == "allow-list (10.0.0.0/8)"
    finally:
        backend.shutdown()


def test_session_sandbox_is_found_again_by_labels(fake_daytona: FakeDaytonaServer, tmp_path: Path) -> None:
    first = DaytonaBackend(daytona_options(fake_daytona))
    interp = _factory(first, tmp_path, session_id="s1")()
    interp.execute("open('/tmp/marker', 'w').write('same sandbox')")
    interp.shutdown()
    first.shutdown()  # another server process later: only the labels lead back to the sandbox
    (kept,) = fake_daytona.state.sandboxes.values()
    assert (_creates(fake_daytona), _uploads(fake_daytona)) == (1, 1)

    second = DaytonaBackend(daytona_options(fake_daytona))
    try:
        sdk_sandbox = second.client.call("get", lambda sdk: sdk.get(kept.id))
        second.client.call("stop", lambda _sdk: sdk_sandbox.stop())  # auto-stop happened meanwhile
        assert kept.state == "stopped"
        again = _factory(second, tmp_path, session_id="s1")()
        assert again.execute("print(open('/tmp/marker').read())") == "same sandbox"
        assert kept.state == "started"
        assert (_creates(fake_daytona), _uploads(fake_daytona)) == (1, 1)  # the uploaded worker is still there
        other = _factory(second, tmp_path, session_id="s2")()
        other.execute("1")
        assert _creates(fake_daytona) == 2
        again.shutdown()
        other.shutdown()
    finally:
        second.shutdown()
    assert {r.labels["session"] for r in fake_daytona.state.sandboxes.values()} == {"s1", "s2"}


def test_volume_persists_across_sandbox_replacement(fake_daytona: FakeDaytonaServer, tmp_path: Path) -> None:
    backend = DaytonaBackend(daytona_options(fake_daytona))
    try:
        writer = _factory(backend, tmp_path, workspace_id="team")()
        writer.execute("open(MEMORY_DIR + '/MEMORIES.md', 'a').write('- likes tea\\n')")
        first_id = next(iter(fake_daytona.state.sandboxes))
        writer.shutdown()
        assert fake_daytona.state.sandboxes == {}  # a one-off sandbox is deleted with its worker
        reader = _factory(backend, tmp_path, workspace_id="team")()
        assert reader.execute("print(open(MEMORY_DIR + '/MEMORIES.md').read().splitlines()[-1])") == "- likes tea"
        assert next(iter(fake_daytona.state.sandboxes)) != first_id
        stranger = _factory(backend, tmp_path, workspace_id="other")()
        assert stranger.execute("print(open(MEMORY_DIR + '/MEMORIES.md').read().count('tea'))") == "0"
        reader.shutdown()
        stranger.shutdown()
    finally:
        backend.shutdown()


def test_children_get_their_own_sandboxes_and_shutdown_cleans_up(
    fake_daytona: FakeDaytonaServer, tmp_path: Path
) -> None:
    backend = DaytonaBackend(daytona_options(fake_daytona))
    parent_factory = _factory(backend, tmp_path, session_id="s1")
    parent = parent_factory()
    parent.execute("x = 'parent'")
    children = [parent_factory.child()() for _ in range(2)]
    for n, child in enumerate(children):
        assert child.execute(f"x = {n}\nprint('x' in globals(), x)") == f"True {n}"
    roles = sorted((r.labels["role"], r.labels.get("parent")) for r in fake_daytona.state.sandboxes.values())
    assert roles == [("child", "s1"), ("child", "s1"), ("root", None)]
    assert parent.execute("print(x)") == "parent"
    children[0].shutdown()
    assert len(fake_daytona.state.sandboxes) == 2
    backend.shutdown()  # the other child was never shut down: the backend deletes it, keeps the session's
    assert [r.labels["role"] for r in fake_daytona.state.sandboxes.values()] == ["root"]
    with pytest.raises(CodeInterpreterError, match="daytona_closed"):
        parent_factory().execute("1")


def test_worker_files_are_uploaded_once_per_sandbox(fake_daytona: FakeDaytonaServer, tmp_path: Path) -> None:
    backend = DaytonaBackend(daytona_options(fake_daytona))
    try:
        factory = _factory(backend, tmp_path, session_id="s1")
        first, second = factory(), factory()  # two workers side by side in the session's sandbox
        first.execute("v = 1")
        assert second.execute("print('v' in globals())") == "False"
        assert (_creates(fake_daytona), _uploads(fake_daytona)) == (1, 1)
        (record,) = fake_daytona.state.sandboxes.values()
        uploaded = record.root / "home/daytona/.fleet-rlm" / worker_version()
        assert sorted(p.name for p in uploaded.iterdir()) == sorted(WORKER_FILES)
        first.shutdown()
        second.shutdown()
    finally:
        backend.shutdown()


def test_worker_that_cannot_start_is_an_interpreter_error(fake_daytona: FakeDaytonaServer, tmp_path: Path) -> None:
    backend = DaytonaBackend(daytona_options(fake_daytona, python="no-such-python3"))
    try:
        interp = _factory(backend, tmp_path)()
        with pytest.raises(CodeInterpreterError, match=r"sandbox failed to start.*no-such-python3"):
            interp.execute("1")
    finally:
        backend.shutdown()
    assert fake_daytona.state.sandboxes == {}


def test_missing_snapshot_and_unreachable_api_are_actionable(fake_daytona: FakeDaytonaServer, tmp_path: Path) -> None:
    for options, code in [
        (daytona_options(fake_daytona, snapshot="nope"), "daytona_snapshot_missing"),
        (daytona_options(fake_daytona, api_url="http://127.0.0.1:9/api"), "daytona_unreachable"),
        (daytona_options(fake_daytona, api_key="wrong"), "daytona_auth_failed"),
    ]:
        backend = DaytonaBackend(options)
        try:
            with pytest.raises(CodeInterpreterError, match=code) as info:
                _factory(backend, tmp_path)().execute("1")
            assert " — " in str(info.value)  # the action follows the message
        finally:
            backend.shutdown()


def test_concurrent_first_use_of_a_session_creates_one_sandbox(
    fake_daytona: FakeDaytonaServer, daytona_backend: DaytonaBackend, tmp_path: Path
) -> None:
    factory = _factory(daytona_backend, tmp_path, session_id="s1")
    interpreters = [factory() for _ in range(3)]
    with ThreadPoolExecutor(3) as pool:
        outputs = list(pool.map(lambda it: it.execute("print('up')"), interpreters))
    assert outputs == ["up"] * 3 and _creates(fake_daytona) == 1
    for interp in interpreters:
        interp.shutdown()
