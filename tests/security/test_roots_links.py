"""Workspace roots are created with the right modes and group in one place, never through a link the guest planted.

A cell can replace meta/, memory/ or memory/MEMORIES.md by a link (to a host directory, or dangling to a path
the host would create). `ensure_roots` runs at every spawn and API request: it must rename the planted entry
aside and recreate a clean one, and must never chown, chmod or create anything at the link's target.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.sandbox import ensure_roots
from fleet_rlm.sandbox.roots import MEMORIES_HEADER, SANDBOX_GID, sandbox_gid

AS_ROOT = os.geteuid() == 0


def _host_dir(tmp_path: Path) -> tuple[Path, os.stat_result]:
    host = tmp_path / "host-dir"
    host.mkdir()
    host.chmod(0o755)
    return host, host.stat()


def _assert_clean_dir(path: Path) -> None:
    info = path.lstat()
    assert stat.S_ISDIR(info.st_mode), f"{path} is not a real directory"
    if AS_ROOT:
        assert (info.st_gid, stat.S_IMODE(info.st_mode)) == (SANDBOX_GID, 0o2770)


def _assert_memories(root: Path) -> None:
    info = (root / "memory" / "MEMORIES.md").lstat()
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o660
    assert info.st_gid == (SANDBOX_GID if AS_ROOT else os.getegid())


@pytest.mark.parametrize("sub", ["meta", "memory", "buffers", "artifacts"])
def test_a_root_replaced_by_a_link_to_a_host_directory(tmp_path: Path, sub: str) -> None:
    workspaces = tmp_path / "workspaces"
    root = ensure_roots(workspaces, "ws1").host_root
    host, before = _host_dir(tmp_path)
    target = root / sub
    os.rename(target, root / f"{sub}.old")
    target.symlink_to(host)

    ensure_roots(workspaces, "ws1")

    after = host.stat()
    assert (after.st_mode, after.st_uid, after.st_gid) == (before.st_mode, before.st_uid, before.st_gid)
    assert list(host.iterdir()) == []  # no MEMORIES.md created in the host directory
    _assert_clean_dir(target)
    displaced = [p for p in root.iterdir() if p.name.startswith(f"{sub}.displaced-")]
    assert len(displaced) == 1 and displaced[0].is_symlink()  # the guest's link is kept aside, not followed
    _assert_memories(root)


@pytest.mark.parametrize("plant", ["dangling", "host_file", "fifo", "directory", "hardlink"])
def test_memories_replaced_by_something_else(tmp_path: Path, plant: str) -> None:
    workspaces = tmp_path / "workspaces"
    root = ensure_roots(workspaces, "ws1").host_root
    memories = root / "memory" / "MEMORIES.md"
    memories.unlink()
    created = tmp_path / "created-by-the-host"
    host_file = tmp_path / "host-file"
    host_file.write_text("host content")
    host_file.chmod(0o600)
    if plant == "dangling":
        memories.symlink_to(created)
    elif plant == "host_file":
        memories.symlink_to(host_file)
    elif plant == "fifo":
        os.mkfifo(memories)
    elif plant == "directory":
        memories.mkdir()
    else:
        os.link(host_file, memories)

    ensure_roots(workspaces, "ws1")  # returns at once: no FIFO waited on

    assert not created.exists()
    assert host_file.read_text() == "host content" and stat.S_IMODE(host_file.stat().st_mode) == 0o600
    assert memories.read_text() == MEMORIES_HEADER
    _assert_memories(root)
    assert any(p.name.startswith("MEMORIES.md.displaced-") for p in (root / "memory").iterdir())


def test_a_file_planted_as_the_workspace_root_component_is_moved_aside(tmp_path: Path) -> None:
    workspaces = tmp_path / "workspaces"
    root = ensure_roots(workspaces, "ws1").host_root
    (root / "meta").rmdir()
    (root / "meta").write_text("guest data, kept")
    ensure_roots(workspaces, "ws1")
    _assert_clean_dir(root / "meta")
    kept = [p for p in root.iterdir() if p.name.startswith("meta.displaced-")]
    assert [p.read_text() for p in kept] == ["guest data, kept"]


def test_an_existing_memories_file_keeps_its_notes_and_gets_the_sandbox_mode(tmp_path: Path) -> None:
    """An older server (or an API request before the first turn) left a root-owned 0644 MEMORIES.md."""
    workspaces = tmp_path / "workspaces"
    root = ensure_roots(workspaces, "ws1").host_root
    memories = root / "memory" / "MEMORIES.md"
    memories.write_text("# Memories\n- an old note\n")
    os.chown(memories, -1, os.getegid())
    memories.chmod(0o644)
    ensure_roots(workspaces, "ws1")
    assert memories.read_text() == "# Memories\n- an old note\n"
    _assert_memories(root)


def test_roots_made_by_an_api_request_are_the_sandboxes_to_write(settings: Settings) -> None:
    """The API creates the roots before any turn; they must have the same group and modes a spawn gives them."""
    with TestClient(create_app(settings)) as client:
        workspace_id = client.get("/api/v1/auth/me").json()["workspace_id"]
    root = settings.workspaces_dir / workspace_id
    for sub in ("memory", "artifacts", "buffers", "meta"):
        _assert_clean_dir(root / sub)
    _assert_memories(root)
    assert sandbox_gid() == (SANDBOX_GID if AS_ROOT else None)
    assert stat.S_IMODE(settings.workspaces_dir.stat().st_mode) == 0o700
