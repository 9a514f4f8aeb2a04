"""Host-side view of a workspace: durable memory (memory/MEMORIES.md) and artifacts/ change detection.

The sandbox writes the same directories from inside; the host reads them directly. Artifacts are detected by
comparing snapshots of artifacts/ (path -> size, mtime) taken around each cell and at the end of the turn, so
it works whatever wrote the file (REPL code, a tool, a child agent).
"""

from __future__ import annotations

import errno
import hashlib
import mimetypes
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from fleet_rlm.events import ArtifactCreated, MemoryUpdated
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.sandbox import prepare_roots

MEMORY_PATH = "memory/MEMORIES.md"
ARTIFACTS_DIR = "artifacts"
MAX_MEMORY_READ_CHARS = 50_000


def prepare_workspace(workspaces_dir: Path, workspace_id: str) -> Path:
    """Create the workspace roots with the ownership the sandbox expects; returns the host root."""
    return prepare_roots(workspaces_dir, workspace_id).host_root


def open_inside(root: Path, rel: str, flags: int) -> int:
    """A descriptor of the regular file `root/rel`, refusing anything sandbox code could plant to make the host
    follow it out of the workspace or block: a symlink (final or parent), a FIFO, a device.

    The opened descriptor's real path is checked again, so a link swapped in after the check cannot escape.
    """
    real_root = root.resolve()
    path = root / rel
    if not path.parent.resolve().is_relative_to(real_root):
        raise OSError(errno.EXDEV, "resolves outside the workspace", str(path))
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o660)
    try:
        link = f"/proc/self/fd/{fd}"
        inside = not os.path.exists(link) or Path(os.readlink(link)).is_relative_to(real_root)
        if not inside or not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file inside the workspace", str(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


class Memory:
    """Read and append the workspace's MEMORIES.md; appends are serialized and announced as events."""

    _lock = threading.Lock()

    def __init__(self, root: Path, emitter: Emitter | None = None) -> None:
        self.root = root
        self.path = root / MEMORY_PATH
        self.emitter = emitter

    def read(self, max_chars: int = MAX_MEMORY_READ_CHARS) -> str:
        try:
            fd = open_inside(self.root, MEMORY_PATH, os.O_RDONLY)
        except OSError:  # missing, or planted by sandbox code as a link/FIFO/device: not memory
            return ""
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(0, size - 4 * max_chars))
            text = handle.read().decode("utf-8", errors="replace")
        return text if len(text) <= max_chars else text[-max_chars:]

    def append(self, note: str) -> int:
        """Append one note (a dated bullet when it is a single line); returns characters appended."""
        note = note.strip()
        if not note:
            raise ValueError("the memory note is empty")
        entry = f"\n- {note}\n" if "\n" not in note else f"\n{note}\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = open_inside(self.root, MEMORY_PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            with os.fdopen(fd, "a", encoding="utf-8") as handle:
                handle.write(entry)
        if self.emitter is not None:
            self.emitter.emit(MemoryUpdated, path=MEMORY_PATH, chars_appended=len(entry))
        return len(entry)

    def size(self) -> int:
        try:
            info = self.path.lstat()
        except FileNotFoundError:
            return 0
        return info.st_size if stat.S_ISREG(info.st_mode) else 0


@dataclass(frozen=True)
class _Seen:
    size: int
    mtime_ns: int


class ArtifactWatcher:
    """Emits artifact_created for files that appeared or changed under artifacts/ since the last scan.

    Also notices growth of MEMORIES.md by code in the sandbox and reports it as memory_updated.
    """

    def __init__(self, root: Path, emitter: Emitter) -> None:
        self.root = root
        self.dir = root / ARTIFACTS_DIR
        self.emitter = emitter
        self._lock = threading.Lock()
        self._seen = self._snapshot()
        self._memory = Memory(root)
        self._memory_size = self._memory.size()
        self.created: list[str] = []

    def _snapshot(self) -> dict[str, _Seen]:
        seen: dict[str, _Seen] = {}
        if not self.dir.is_dir():
            return seen
        for dirpath, _dirs, files in os.walk(self.dir):
            for name in files:
                path = Path(dirpath) / name
                try:
                    info = path.lstat()  # never follow: links and FIFOs planted by guest code are not artifacts
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    seen[str(path.relative_to(self.root))] = _Seen(info.st_size, info.st_mtime_ns)
        return seen

    def scan(self, emitter: Emitter | None = None) -> list[ArtifactCreated]:
        emitter = emitter or self.emitter
        events: list[ArtifactCreated] = []
        with self._lock:
            current = self._snapshot()
            changed = sorted(p for p, s in current.items() if self._seen.get(p) != s)
            self._seen = current
            memory_size = self._memory.size()
            grown, self._memory_size = memory_size - self._memory_size, memory_size
        for rel in changed:
            event = self._emit(rel, emitter)
            if event is not None:
                events.append(event)
        if grown > 0:
            emitter.emit(MemoryUpdated, path=MEMORY_PATH, chars_appended=grown)
        return events

    def sync_memory(self) -> None:
        """The host itself appended to memory (and announced it): move the baseline so it is not reported twice."""
        with self._lock:
            self._memory_size = self._memory.size()

    def _emit(self, rel: str, emitter: Emitter) -> ArtifactCreated | None:
        path = self.root / rel
        digest = hashlib.sha256()
        size = 0
        try:
            with os.fdopen(open_inside(self.root, rel, os.O_RDONLY), "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
                    size += len(block)
        except OSError:
            return None
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        self.created.append(rel)
        return emitter.emit(
            ArtifactCreated, name=path.name, path=rel, size_bytes=size, sha256=digest.hexdigest(), media_type=media_type
        )
