"""Walk a directory of the workspace without leaving it: tree listings and bounded text gathering.

Shared by repository and path sources. Everything goes through `sandbox.guestfs`: directories are entered
fd-relative without following links, and links, FIFOs and devices are listed but never read (even a link that
points inside: the guest can swap its target between any check and the read).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context.convert import convert_bytes
from fleet_rlm.sandbox import guestfs

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv"})
WALK_MAX_ENTRIES = 100_000


def walk_files(root: Path, rel: str = "") -> Iterator[tuple[str, guestfs.Entry]]:
    """(path relative to `root/rel`, entry) of everything but directories, sorted per directory, skipping VCS
    and dependency folders; at most `WALK_MAX_ENTRIES` entries are looked at."""
    start = guestfs.normalized(rel)
    cut = len(start) + 1 if start else 0
    for entry in guestfs.walk(root, start, max_entries=WALK_MAX_ENTRIES, skip_dirs=SKIP_DIRS):
        if entry.kind != "dir":
            yield entry.rel[cut:], entry


def tree_listing(root: Path, rel: str = "", *, max_entries: int) -> tuple[str, int, bool]:
    """One `path (size)` line per file, at most `max_entries`; returns (text, total files, truncated)."""
    lines: list[str] = []
    total = 0
    for relative, entry in walk_files(root, rel):
        total += 1
        if len(lines) < max_entries:
            lines.append(f"{relative} ({_human(entry.size)})")
    if total > len(lines):
        lines.append(f"... {total - len(lines)} more files not listed")
    return "\n".join(lines), total, total > max_entries


@dataclass
class Gathered:
    sections: list[str] = field(default_factory=list)
    chars: int = 0
    truncated: bool = False
    skipped: list[str] = field(default_factory=list)


def gather_texts(root: Path, rel: str = "", *, label: str, max_chars: int) -> Gathered:
    """Readable files under `root/rel` as `--- label/path ---` sections, `max_chars` in all; others skipped."""
    out = Gathered()
    for relative, entry in walk_files(root, rel):
        budget = max_chars - out.chars
        if budget <= 0:
            out.truncated = True
            break
        shown = f"{label.rstrip('/')}/{relative}" if label else relative
        text, clipped = _file_text(root, entry, budget) if entry.kind == "file" else (None, False)
        if text is None:
            out.skipped.append(shown)
            continue
        out.sections.append(f"--- {shown} ---\n{text}")
        out.chars += len(text)
        if clipped:
            out.truncated = True
            break
    return out


def _file_text(root: Path, entry: guestfs.Entry, budget: int) -> tuple[str | None, bool]:
    try:
        data, info = guestfs.read_bytes(root, entry.rel, max_bytes=budget)
    except OSError:  # swapped for a link, FIFO or device since it was listed, or unreadable
        return None, False
    size = info.st_size
    try:
        if size > budget:  # only the head of an oversized text file; binary formats need the whole file
            if b"\x00" in data[:8192]:
                return None, False
            return data.decode("utf-8", "replace")[:budget], True
        text = convert_bytes(data, name=entry.name, media_type=None).text
    except FleetError:
        return None, False
    return (text[:budget], True) if len(text) > budget else (text, False)


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"
