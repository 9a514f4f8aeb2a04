"""What a session's sandbox sees: its own session's context documents, read-only; nothing of other sessions.

Real cells in real sandboxes (bubblewrap, reduced; Daytona against the fake server in
tests/sandbox/daytona/test_session_context_daytona.py). Documents are written where the runtime writes them
(`ensure_session_context` + `write_document`), never into the workspace.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from fleet_rlm.runtime.context.documents import write_document
from fleet_rlm.sandbox import SandboxOptions, SandboxPool
from fleet_rlm.sandbox.context_view import SANDBOXES_DIR, ensure_session_context
from fleet_rlm.sandbox.factory import interpreter_factory
from fleet_rlm.sandbox.interpreter import SandboxInterpreter
from fleet_rlm.sandbox.worker_code import compiled_worker
from tests.sandbox.conftest import needs_bwrap

PROBE = """
import json, os
found = []
for top in (CONTEXT_DIR, WORKSPACE_ROOT):
    for current, dirs, files in os.walk(top):
        for name in files:
            path = os.path.join(current, name)
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    if "SECRET-OF-" in handle.read():
                        found.append(name)
            except OSError:
                pass
print(json.dumps(sorted(found)))
"""


def _attach(data_dir: Path, session: str, text: str) -> str:
    return write_document(ensure_session_context(data_dir, session), name="doc", kind="text", text=text).path


def _interp(options: SandboxOptions, **kwargs: object) -> SandboxInterpreter:
    return interpreter_factory("local", data_dir=options.data_dir, isolation=options.isolation, **kwargs)()  # type: ignore[arg-type]


@pytest.mark.parametrize("backend", ["bubblewrap", "reduced"], indirect=True)
def test_second_session_cannot_see_first_sessions_document(options: SandboxOptions) -> None:
    name = _attach(options.data_dir, "s1", "SECRET-OF-S1 the answer is 41")
    one = _interp(options, session_id="s1", workspace_id="ws")
    two = _interp(options, session_id="s2", workspace_id="ws")
    try:
        assert json.loads(one.execute(PROBE)) == [name]
        assert json.loads(two.execute(PROBE)) == []
        assert two.execute("print(sorted(os.listdir(CONTEXT_DIR)))") == "[]"
    finally:
        one.shutdown()
        two.shutdown()
    assert not (options.workspaces_dir / "ws" / "buffers" / "context").exists()


@pytest.mark.parametrize("backend", ["bubblewrap", "reduced"], indirect=True)
def test_pool_spares_and_ephemeral_children_see_only_their_session(options: SandboxOptions) -> None:
    pool = SandboxPool(options, size=2, idle_timeout_s=60)
    try:
        pool.prewarm("ws", wait=True)  # spares exist before any session is known
        _attach(options.data_dir, "s1", "SECRET-OF-S1")
        root = interpreter_factory("local", pool=pool, session_id="s1", workspace_id="ws")()
        child = interpreter_factory("local", pool=pool, session_id=None, context_session="s1", workspace_id="ws")()
        other = interpreter_factory("local", pool=pool, session_id="s2", workspace_id="ws")()
        try:
            assert len(json.loads(root.execute(PROBE))) == 1
            assert len(json.loads(child.execute(PROBE))) == 1  # a nested RLM reads its parent's documents
            assert json.loads(other.execute(PROBE)) == []
            later = _attach(options.data_dir, "s1", "SECRET-OF-S1 loaded by a later turn")
        finally:
            for interp in (root, child, other):
                interp.shutdown()
        again = interpreter_factory("local", pool=pool, session_id="s1", workspace_id="ws")()
        try:  # the session's warm worker picks up documents of later turns at its next lease
            assert later in json.loads(again.execute(PROBE))
        finally:
            again.shutdown()
    finally:
        pool.shutdown()
    assert list((options.data_dir / SANDBOXES_DIR).iterdir()) == []  # views go with their sandboxes


MUTATE = """
import os
name = sorted(os.listdir(CONTEXT_DIR))[0]
path = os.path.join(CONTEXT_DIR, name)
results = {}
def attempt(label, fn):
    try:
        fn()
        results[label] = "ok"
    except OSError as exc:
        results[label] = type(exc).__name__
attempt("write", lambda: open(path, "a").write("x"))
attempt("unlink", lambda: os.unlink(path))
attempt("rename", lambda: os.rename(path, path + ".moved"))
attempt("chmod", lambda: os.chmod(path, 0o666))
attempt("create", lambda: open(os.path.join(CONTEXT_DIR, "new.txt"), "w").close())
attempt("link", lambda: os.link(path, os.path.join(WORKSPACE_ROOT, "artifacts", "linked.txt")))
import json
import subprocess
print(json.dumps(results))
"""


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_guest_cannot_modify_its_own_sessions_context(options: SandboxOptions) -> None:
    text = "SECRET-OF-S1 must stay as written"
    name = _attach(options.data_dir, "s1", text)
    interp = _interp(options, session_id="s1", workspace_id="ws")
    try:
        results = json.loads(interp.execute(MUTATE))
    finally:
        interp.shutdown()
    assert set(results.values()) <= {"OSError", "PermissionError"}, results
    assert (options.data_dir / "sessions" / "s1" / "context" / name).read_text() == text


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_mount_tables_name_only_the_bound_directories(options: SandboxOptions) -> None:
    """What the guest can read about host paths: /proc/self/mounts names none; /proc/self/mountinfo shows the
    source path of each bind (the kernel prints it relative to the file system's root), so it names this
    workspace, this sandbox's own context view and the worker's code - and nothing else of the data dir
    (docs/security.md)."""
    _attach(options.data_dir, "s1", "SECRET-OF-S1")
    interp = _interp(options, session_id="s1", workspace_id="ws")
    try:
        mountinfo = interp.execute("print(open('/proc/self/mountinfo').read())")
        mounts = interp.execute("print(open('/proc/self/mounts').read())")
    finally:
        interp.shutdown()
    data = str(options.data_dir.resolve())
    assert data not in mounts
    sources = [line.split()[3] for line in mountinfo.splitlines()]
    named = sorted(s for s in sources if s.startswith(data))
    assert len(named) == 3, named
    assert named[0] == str(compiled_worker(options.data_dir).resolve())
    assert named[1].startswith(f"{data}/{SANDBOXES_DIR}/") and named[2] == f"{data}/workspaces/ws"
    assert "sessions" not in mountinfo and "fleet.db" not in mountinfo and "secret.key" not in mountinfo


def test_views_left_by_a_dead_process_are_pruned(tmp_path: Path) -> None:
    from fleet_rlm.sandbox.context_view import ContextView, _host_tag

    parent = tmp_path / "data" / SANDBOXES_DIR
    dead = subprocess.Popen(["true"])
    dead.wait()
    (stale := parent / f"{_host_tag()}-{dead.pid}-0").mkdir(parents=True)
    (foreign := parent / f"other-host-{dead.pid}-0").mkdir()
    view = ContextView(tmp_path / "data")
    assert not stale.exists() and foreign.exists() and view.path.is_dir()
    view.remove()


@pytest.mark.parametrize("backend", ["bubblewrap", "reduced"], indirect=True)
def test_a_sandbox_that_fails_to_spawn_leaves_no_view_and_no_pipes(options: SandboxOptions) -> None:
    """The view is made before the worker's code is built and the process spawned; when either fails (here the
    code directory's place is taken by a file), the view and the protocol pipes go with the error."""
    from fleet_rlm.sandbox.launcher import spawn_worker

    options.data_dir.mkdir(parents=True)
    (options.data_dir / "sandbox-code").write_text("not a directory")
    fds_before = set(os.listdir("/proc/self/fd"))
    for _ in range(3):
        with pytest.raises(OSError):
            spawn_worker(options, "ws")
    assert list((options.data_dir / SANDBOXES_DIR).iterdir()) == []
    assert set(os.listdir("/proc/self/fd")) <= fds_before
