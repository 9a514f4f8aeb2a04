"""Daytona: a session's sandbox receives that session's context documents (uploaded outside the shared
workspace volume, read-only), a child sandbox receives its parent's, another session's sandbox nothing."""

from __future__ import annotations

import json
from pathlib import Path

from fleet_rlm.sandbox.daytona import DaytonaBackend
from fleet_rlm.sandbox.factory import interpreter_factory
from fleet_rlm.testing.fake_daytona import FakeDaytonaServer
from tests.sandbox.test_session_context import PROBE, _attach


def test_sessions_see_only_their_own_context(
    daytona_backend: DaytonaBackend, fake_daytona: FakeDaytonaServer, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    name = _attach(data, "s1", "SECRET-OF-S1 the answer is 41")
    (repo := data / "sessions" / "s1" / "context" / "repos" / "demo-abc").mkdir(parents=True)
    (repo / "README.md").write_text("SECRET-OF-S1 in a repository clone")

    def make(**kwargs: object) -> object:
        return interpreter_factory(daytona_backend, data_dir=data, workspace_id="ws", **kwargs)

    one = make(session_id="s1")()  # type: ignore[operator]
    two = make(session_id="s2")()  # type: ignore[operator]
    child = make(session_id="s1").child()()  # type: ignore[attr-defined]
    try:
        assert json.loads(one.execute(PROBE)) == sorted(["README.md", name])
        assert json.loads(child.execute(PROBE)) == sorted(["README.md", name])
        assert json.loads(two.execute(PROBE)) == []
        assert one.execute("print(CONTEXT_DIR)") == "/context"
        later = _attach(data, "s1", "SECRET-OF-S1 from a later turn")
        one.shutdown()
        again = make(session_id="s1")()  # type: ignore[operator]
        assert later in json.loads(again.execute(PROBE))  # the session's sandbox gets only what it lacks
        modes = again.execute(f"import stat\nprint(oct(stat.S_IMODE(os.stat(CONTEXT_DIR + '/{name}').st_mode)))")
        assert modes == "0o444"
        again.shutdown()
    finally:
        for interp in (one, two, child):
            interp.shutdown()
    on_volumes = [p for v in fake_daytona.state.volumes.values() for p in v.host_dir.rglob("*") if p.is_file()]
    assert not any("SECRET-OF-S1" in p.read_text(errors="replace") for p in on_volumes)  # never on shared storage
