"""Files sandbox code plants in its own workspace must never make the HOST follow them out or block on them.

The sandbox writes memory/ and artifacts/ from inside; the host later reads MEMORIES.md (the read_memory tool),
appends to it, and hashes new artifacts. A symlink to a host file, a symlinked directory, a FIFO or a link to
/dev/zero must be ignored or refused, never read, written or waited on.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fleet_rlm.events import ArtifactCreated
from fleet_rlm.runtime.workspace import ArtifactWatcher, Memory
from fleet_rlm.sandbox import guestfs

pytestmark = pytest.mark.db_independent


class Sink:
    def __init__(self) -> None:
        self.events: list[object] = []

    def emit(self, kind: type, **fields: object) -> object:
        event = (kind, fields)
        self.events.append(event)
        return event


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    for sub in ("memory", "artifacts"):
        (workspace / sub).mkdir(parents=True)
    (tmp_path / "host-secret.txt").write_text("host secret")
    return workspace


@pytest.mark.parametrize("plant", ["symlink", "fifo", "devzero", "dir_symlink"])
def test_memory_refuses_planted_files(root: Path, plant: str) -> None:
    secret = root.parent / "host-secret.txt"
    target = root / "memory" / "MEMORIES.md"
    if plant == "symlink":
        target.symlink_to(secret)
    elif plant == "fifo":
        os.mkfifo(target)
    elif plant == "devzero":
        target.symlink_to("/dev/zero")
    else:
        (root / "memory").rmdir()
        (root / "memory").symlink_to(root.parent)
        (root.parent / "MEMORIES.md").write_text("outside")
    memory = Memory(root)
    assert memory.read() == ""  # returns at once: nothing followed, nothing blocked on
    assert memory.size() == 0
    # the planted entry is renamed aside (kept, never followed) and a real MEMORIES.md takes its place
    memory.append("a note that must not land outside the workspace")
    assert secret.read_text() == "host secret"
    assert "a note that must not" in memory.read()
    placed = root / "memory" / "MEMORIES.md"
    assert placed.is_file() and not placed.is_symlink()
    if plant == "dir_symlink":
        assert (root.parent / "MEMORIES.md").read_text() == "outside"
        assert any(p.name.startswith("memory.displaced-") and p.is_symlink() for p in root.iterdir())
    else:
        assert any(p.name.startswith("MEMORIES.md.displaced-") for p in (root / "memory").iterdir())


def test_memory_round_trip_still_works(root: Path) -> None:
    memory = Memory(root)
    memory.append("remember the milk")
    assert "remember the milk" in memory.read()
    assert memory.size() > 0


def test_artifact_watcher_ignores_links_fifos_and_devices(root: Path) -> None:
    sink = Sink()
    watcher = ArtifactWatcher(root, sink)  # type: ignore[arg-type]
    artifacts = root / "artifacts"
    (artifacts / "stolen.txt").symlink_to(root.parent / "host-secret.txt")
    (artifacts / "zero.bin").symlink_to("/dev/zero")
    os.mkfifo(artifacts / "pipe")
    (artifacts / "ok.txt").write_text("fine")
    watcher.scan()
    names = [fields["name"] for kind, fields in sink.events if kind is ArtifactCreated]  # type: ignore[misc]
    assert names == ["ok.txt"]


def test_guestfs_open_refuses_escapes(root: Path) -> None:
    (root / "memory" / "link").symlink_to(root.parent / "host-secret.txt")
    with pytest.raises(OSError):
        guestfs.open_file(root, "memory/link")
    with pytest.raises(OSError):
        guestfs.open_file(root, "../host-secret.txt")
    (root / "memory" / "real.txt").write_text("ok")
    fd, _info = guestfs.open_file(root, "memory/real.txt")
    with os.fdopen(fd) as handle:
        assert handle.read() == "ok"
