"""Walk a directory inside the workspace without leaving it: tree listings and bounded text gathering.

Shared by repository and path sources. Directory symlinks are never followed; file symlinks are read only
when they resolve inside `boundary` (the workspace root), so a link to /etc/passwd lists but is not read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context.convert import convert_bytes

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv"})


def walk_files(root: Path) -> Iterator[Path]:
    """Files under `root` as relative paths, sorted per directory, skipping VCS and dependency folders."""
    for current, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(name for name in dirs if name not in SKIP_DIRS)
        base = Path(current)
        for name in sorted(files):
            yield (base / name).relative_to(root)


def tree_listing(root: Path, *, max_entries: int) -> tuple[str, int, bool]:
    """One `path (size)` line per file, at most `max_entries`; returns (text, total files, truncated)."""
    lines: list[str] = []
    total = 0
    for relative in walk_files(root):
        total += 1
        if len(lines) < max_entries:
            try:
                size = (root / relative).lstat().st_size
            except OSError:
                continue
            lines.append(f"{relative.as_posix()} ({_human(size)})")
    if total > len(lines):
        lines.append(f"... {total - len(lines)} more files not listed")
    return "\n".join(lines), total, total > max_entries


def contained(path: Path, boundary: Path) -> bool:
    """True when `path`, with every symlink resolved, lies inside `boundary` (already resolved)."""
    try:
        return path.resolve(strict=True).is_relative_to(boundary)
    except (OSError, RuntimeError):
        return False


@dataclass
class Gathered:
    sections: list[str] = field(default_factory=list)
    chars: int = 0
    truncated: bool = False
    skipped: list[str] = field(default_factory=list)


def gather_texts(root: Path, *, boundary: Path, label: str, max_chars: int) -> Gathered:
    """Readable files under `root` as `--- label/path ---` sections, `max_chars` in all; unreadable ones skipped."""
    out = Gathered()
    for relative in walk_files(root):
        budget = max_chars - out.chars
        if budget <= 0:
            out.truncated = True
            break
        full = root / relative
        shown = f"{label.rstrip('/')}/{relative.as_posix()}" if label else relative.as_posix()
        if not contained(full, boundary):
            out.skipped.append(shown)
            continue
        text, clipped = _file_text(full, shown, budget)
        if text is None:
            out.skipped.append(shown)
            continue
        out.sections.append(f"--- {shown} ---\n{text}")
        out.chars += len(text)
        if clipped:
            out.truncated = True
            break
    return out


def _file_text(path: Path, shown: str, budget: int) -> tuple[str | None, bool]:
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            data = handle.read(budget if size > budget else size)
    except OSError:
        return None, False
    try:
        if size > budget:  # only the head of an oversized text file; binary formats need the whole file
            if b"\x00" in data[:8192]:
                return None, False
            return data.decode("utf-8", "replace")[:budget], True
        text = convert_bytes(data, name=path.name, media_type=None).text
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
