"""Host-side view of a workspace: durable memory (memory/MEMORIES.md) and artifacts/ change detection.

The sandbox writes the same directories from inside; the host reads them directly. Artifacts are detected by
comparing snapshots of artifacts/ (path -> size, mtime) taken around each cell and at the end of the turn, so
it works whatever wrote the file (REPL code, a tool, a child agent).
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from fleet_rlm.events import ArtifactCreated, MemoryUpdated
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.sandbox import ensure_roots, isolation_level

MEMORY_PATH = "memory/MEMORIES.md"
ARTIFACTS_DIR = "artifacts"
MAX_MEMORY_READ_CHARS = 50_000


def prepare_workspace(workspaces_dir: Path, workspace_id: str) -> Path:
    """Create the workspace roots with the ownership the sandbox expects; returns the host root."""
    gid: int | None = None
    if os.geteuid() == 0 and isolation_level() == "bubblewrap":
        from fleet_rlm.sandbox.launcher import SANDBOX_GID  # workers run as their own uid in this group

        gid = SANDBOX_GID
    return ensure_roots(workspaces_dir, workspace_id, sandbox_gid=gid).host_root


class Memory:
    """Read and append the workspace's MEMORIES.md; appends are serialized and announced as events."""

    _lock = threading.Lock()

    def __init__(self, root: Path, emitter: Emitter | None = None) -> None:
        self.root = root
        self.path = root / MEMORY_PATH
        self.emitter = emitter

    def read(self, max_chars: int = MAX_MEMORY_READ_CHARS) -> str:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""
        return text if len(text) <= max_chars else text[-max_chars:]

    def append(self, note: str) -> int:
        """Append one note (a dated bullet when it is a single line); returns characters appended."""
        note = note.strip()
        if not note:
            raise ValueError("the memory note is empty")
        entry = f"\n- {note}\n" if "\n" not in note else f"\n{note}\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(entry)
        if self.emitter is not None:
            self.emitter.emit(MemoryUpdated, path=MEMORY_PATH, chars_appended=len(entry))
        return len(entry)

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0


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
                    stat = path.stat()
                except OSError:
                    continue
                seen[str(path.relative_to(self.root))] = _Seen(stat.st_size, stat.st_mtime_ns)
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
            with path.open("rb") as handle:
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
