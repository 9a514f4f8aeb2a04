"""Host-side view of a workspace: durable memory (memory/MEMORIES.md) and artifacts/ change detection.

The sandbox writes the same directories from inside; the host reads them only through `sandbox.guestfs`
(fd-relative, never following a link the guest planted or swapped in). Artifacts are detected by comparing
snapshots of artifacts/ (path -> size, mtime) taken around each cell and at the end of the turn, so it works
whatever wrote the file (REPL code, a tool, a child agent).
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from fleet_rlm.events import ArtifactCreated, MemoryUpdated
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.sandbox import ensure_roots, guestfs, prepare_roots

MEMORY_PATH = "memory/MEMORIES.md"
ARTIFACTS_DIR = "artifacts"
MAX_MEMORY_READ_CHARS = 50_000
ARTIFACTS_MAX_DEPTH = 16
ARTIFACTS_MAX_ENTRIES = 20_000


def prepare_workspace(workspaces_dir: Path, workspace_id: str) -> Path:
    """Create the workspace roots with the ownership the sandbox expects; returns the host root."""
    return prepare_roots(workspaces_dir, workspace_id).host_root


class Memory:
    """Read and append the workspace's MEMORIES.md; appends are serialized and announced as events."""

    _lock = threading.Lock()

    def __init__(self, root: Path, emitter: Emitter | None = None) -> None:
        self.root = root
        self.path = root / MEMORY_PATH
        self.emitter = emitter

    def read(self, max_chars: int = MAX_MEMORY_READ_CHARS) -> str:
        try:
            data, _info = guestfs.read_bytes(self.root, MEMORY_PATH, max_bytes=4 * max_chars, tail=True)
        except OSError:  # missing, or planted by sandbox code as a link/FIFO/device: not memory
            return ""
        text = data.decode("utf-8", errors="replace")
        return text if len(text) <= max_chars else text[-max_chars:]

    def append(self, note: str) -> int:
        """Append one note (a dated bullet when it is a single line); returns characters appended.

        A missing or planted memory/ or MEMORIES.md is first recreated by `ensure_roots` (the one place that
        knows the file's mode and group), so the sandbox can still append to what the host wrote.
        """
        note = note.strip()
        if not note:
            raise ValueError("the memory note is empty")
        entry = f"\n- {note}\n" if "\n" not in note else f"\n{note}\n"
        with self._lock:
            if not stat.S_ISREG(self._lstat().st_mode):
                ensure_roots(self.root.parent, self.root.name)
            fd, _info = guestfs.open_file(self.root, MEMORY_PATH, os.O_WRONLY | os.O_APPEND)
            with os.fdopen(fd, "ab") as handle:
                handle.write(entry.encode("utf-8"))
        if self.emitter is not None:
            self.emitter.emit(MemoryUpdated, path=MEMORY_PATH, chars_appended=len(entry))
        return len(entry)

    def _lstat(self) -> os.stat_result:
        try:
            return guestfs.lstat(self.root, MEMORY_PATH)
        except OSError:
            return os.stat_result((0,) * 10)

    def size(self) -> int:
        info = self._lstat()
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
        try:
            # never follows: links, FIFOs and devices planted by guest code are listed as such, not artifacts
            for entry in guestfs.walk(
                self.root, ARTIFACTS_DIR, max_depth=ARTIFACTS_MAX_DEPTH, max_entries=ARTIFACTS_MAX_ENTRIES
            ):
                if entry.kind == "file":
                    seen[entry.rel] = _Seen(entry.size, entry.mtime_ns)
        except OSError:  # artifacts/ missing or replaced by a link: nothing to report
            pass
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
            with os.fdopen(guestfs.open_file(self.root, rel)[0], "rb") as handle:
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
