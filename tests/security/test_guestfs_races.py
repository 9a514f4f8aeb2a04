"""The host never follows the guest: a real concurrent process swaps workspace entries for links while the host
reads, lists, hashes, appends and creates roots, many times. The host must never return or serve the secret's
bytes, never list outside the workspace, and never chmod, chown or create anything outside it.

These race a separate process (tests/security/swapper.py) against the public entry points: context_paths
(`load_context`), the tools-mode workspace tools, Memory, ArtifactWatcher, the volume API and `ensure_roots`.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context import load_context
from fleet_rlm.runtime.contracts import ContextSource
from fleet_rlm.runtime.host_tools import HostTools
from fleet_rlm.runtime.workspace import ArtifactWatcher, Memory
from fleet_rlm.sandbox import ensure_roots
from fleet_rlm.sandbox.roots import WorkspaceUnavailable
from tests.security.swapper import race, swapping

SECRET = "TOP-SECRET-outside-the-workspace-5f2c"


class Sink:
    def __init__(self) -> None:
        self.events: list[tuple[type, dict[str, Any]]] = []

    def emit(self, kind: type, **fields: Any) -> object:
        self.events.append((kind, fields))
        return fields


@pytest.fixture
def world(tmp_path: Path) -> SimpleNamespace:
    """A workspace with a public file and directory, and outside it a 0600 secret file and a secret directory
    shaped like the public one (so a followed link would produce a plausible, leaking answer)."""
    workspaces = tmp_path / "workspaces"
    root = ensure_roots(workspaces, "ws1").host_root
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    for path in (outside / "secret.txt", outside / "notes.txt", outside / "sub" / "deep.txt", outside / "MEMORIES.md"):
        path.write_text(SECRET)
        path.chmod(0o600)
    docs = root / "memory" / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "notes.txt").write_text("public notes")
    (docs / "sub" / "deep.txt").write_text("public deep")
    (root / "memory" / "doc.txt").write_text("public doc")
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")  # type: ignore[call-arg]
    return SimpleNamespace(root=root, outside=outside, docs=docs, settings=settings, tmp=tmp_path)


def _no_secret(value: object) -> None:
    assert SECRET not in str(value), "the host returned bytes from outside the workspace"


def _context(world: SimpleNamespace, path: str) -> str | None:
    try:
        docs = load_context(
            [ContextSource(kind="path", path=path)],
            workspace_dir=world.root,
            context_dir=world.tmp / "data" / "sessions" / "s1" / "context",
            settings=world.settings,
        )
    except FleetError as exc:
        assert exc.code == "context_path_invalid" and exc.status < 500, exc
        return None
    text = docs.documents[0].text
    _no_secret(text)
    assert "outside" not in text and "secret.txt" not in text  # nothing listed from outside
    return text


def test_context_path_file_swapped_for_a_link(world: SimpleNamespace) -> None:
    target = world.root / "memory" / "doc.txt"
    with swapping("file", target, world.outside / "secret.txt") as swapper:
        race(swapper, lambda: _context(world, "memory/doc.txt"))


def test_context_path_parent_directory_swapped_for_a_link(world: SimpleNamespace) -> None:
    with swapping("dir", world.docs, world.outside) as swapper:
        race(swapper, lambda: (_context(world, "memory/docs/notes.txt"), _context(world, "memory/docs/sub")))


def test_context_path_directory_variant_never_lists_outside(world: SimpleNamespace) -> None:
    (world.root.parent / "other-user").mkdir()
    (world.root.parent / "other-user" / "secret.txt").write_text(SECRET)
    with swapping("dir", world.docs, world.root.parent) as swapper:  # the link would list every workspace
        race(swapper, lambda: _context(world, "memory/docs"))


def test_tools_mode_workspace_tools(world: SimpleNamespace) -> None:
    scope: Any = SimpleNamespace(workspace_root=world.root)
    tools = HostTools(scope, context=None, memory=Memory(world.root), delegate=str)  # type: ignore[arg-type]

    def attempt() -> None:
        for call in (
            lambda: tools.read_workspace_file("memory/doc.txt"),
            lambda: tools.read_workspace_file("memory/docs/notes.txt"),
            lambda: tools.list_workspace("memory/docs"),
        ):
            try:
                _no_secret(call())
            except (FleetError, ValueError) as exc:
                assert not isinstance(exc, FleetError) or exc.status < 500
                _no_secret(exc)

    with (
        swapping("file", world.root / "memory" / "doc.txt", world.outside / "secret.txt") as one,
        swapping("dir", world.docs, world.outside),
    ):
        race(one, attempt)


def test_memory_read_and_append(world: SimpleNamespace) -> None:
    memory = Memory(world.root)
    memory.append("my own note")
    secret_memories = world.outside / "MEMORIES.md"

    def attempt() -> None:
        _no_secret(memory.read())
        try:
            memory.append("a note for the workspace")
        except (OSError, WorkspaceUnavailable):  # refused (the guest raced every retry of its roots): never leaked
            pass
        assert secret_memories.read_text() == SECRET

    with swapping("dir", world.root / "memory", world.outside) as swapper:
        race(swapper, attempt, min_attempts=100, min_swaps=100)
    assert secret_memories.read_text() == SECRET and stat.S_IMODE(secret_memories.stat().st_mode) == 0o600


def test_artifact_watcher_never_hashes_outside(world: SimpleNamespace) -> None:
    artifacts = world.root / "artifacts"
    (artifacts / "report.txt").write_text("report")
    (artifacts / "sub").mkdir()
    (artifacts / "sub" / "deep.txt").write_text("deep")
    secret_hash = hashlib.sha256(SECRET.encode()).hexdigest()
    sink = Sink()
    watcher = ArtifactWatcher(world.root, sink)  # type: ignore[arg-type]

    def attempt() -> None:
        (artifacts / "report.txt").touch()
        for event in watcher.scan():
            _no_secret(event)
        for _kind, fields in sink.events:
            assert fields.get("sha256") != secret_hash, fields

    with (
        swapping("file", artifacts / "report.txt", world.outside / "secret.txt") as one,
        swapping("dir", artifacts / "sub", world.outside / "sub"),
    ):
        race(one, attempt, min_attempts=100, min_swaps=100)
    assert any(fields.get("name") == "report.txt" for _kind, fields in sink.events)


def test_volume_routes_under_swaps(world: SimpleNamespace, settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        root = settings.workspaces_dir / client.get("/api/v1/auth/me").json()["workspace_id"]
        (root / "artifacts" / "a.txt").write_text("public")
        (root / "artifacts" / "d").mkdir()
        (root / "artifacts" / "d" / "deep.txt").write_text("public")

        def attempt() -> None:
            for route, path in (("file", "artifacts/a.txt"), ("file", "artifacts/d/deep.txt"), ("tree", "artifacts")):
                response = client.get(f"/api/v1/runtime/volume/{route}", params={"path": path})
                assert response.status_code in (200, 400, 404), response.text
                _no_secret(response.text)
                assert "secret.txt" not in response.text

        with (
            swapping("file", root / "artifacts" / "a.txt", world.outside / "secret.txt") as one,
            swapping("dir", root / "artifacts" / "d", world.outside / "sub"),
        ):
            race(one, attempt, min_attempts=25, min_swaps=60)


def test_volume_routes_answer_4xx_for_loops_and_proc_targets(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        root = settings.workspaces_dir / client.get("/api/v1/auth/me").json()["workspace_id"]
        os.symlink("loop", root / "meta" / "loop")
        os.symlink("b", root / "meta" / "a")
        os.symlink("a", root / "meta" / "b")
        os.symlink("/proc/1/root/etc", root / "meta" / "proc-root")
        os.symlink("/proc/self/cwd", root / "meta" / "proc-self")
        for path in ("meta/loop", "meta/a", "meta/loop/x", "meta/proc-root/passwd", "meta/proc-self/fleet.db"):
            for route in ("file", "tree"):
                response = client.get(f"/api/v1/runtime/volume/{route}", params={"path": path})
                assert response.status_code == 400, (route, path, response.text)
                assert response.json()["error"]["code"] == "invalid_path"
        tree = client.get("/api/v1/runtime/volume/tree", params={"path": "meta"}).json()
        assert {e["name"]: e["type"] for e in tree["entries"]}["loop"] == "symlink"


def test_ensure_roots_under_swaps_never_touches_outside(tmp_path: Path) -> None:
    workspaces = tmp_path / "workspaces"
    root = ensure_roots(workspaces, "ws1").host_root
    host_dir = tmp_path / "host-dir"
    host_dir.mkdir()
    host_dir.chmod(0o755)
    before = host_dir.stat()
    created = tmp_path / "created-through-a-dangling-link"

    def attempt() -> None:
        try:
            ensure_roots(workspaces, "ws1")
        except WorkspaceUnavailable:  # the guest raced every retry: a clean 503, never a traceback
            pass
        assert not created.exists()
        assert list(host_dir.iterdir()) == []

    (root / "meta").rmdir()
    (root / "meta").mkdir()
    with (
        swapping("dir", root / "meta", host_dir) as one,
        swapping("file", root / "memory" / "MEMORIES.md", created),
    ):
        race(one, attempt, min_attempts=100, min_swaps=100)
    after = host_dir.stat()
    assert (after.st_mode, after.st_uid, after.st_gid) == (before.st_mode, before.st_uid, before.st_gid)
    assert not created.exists()
