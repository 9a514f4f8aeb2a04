"""Read-only, workspace-confined access to a user's volume (the durable roots their sandboxes write).

Every path is relative to the workspace root. `..`, absolute paths and NUL bytes are refused outright; the
rest is resolved (following symlinks) and must still lie inside the workspace, because sandbox code can plant
a symlink to /etc/passwd or another workspace. Files are opened with O_NOFOLLOW and the opened descriptor is
checked again, so a symlink swapped in between check and open cannot escape either.
"""

from __future__ import annotations

import base64
import os
import stat
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from fleet_rlm.api.schemas.volume import VolumeEntry, VolumeFile, VolumeTree
from fleet_rlm.errors import FleetError, NotFound

FILE_MAX_BYTES = 1024 * 1024
TREE_MAX_DEPTH = 8
TREE_MAX_ENTRIES = 5000


def invalid_path(path: str, why: str) -> FleetError:
    return FleetError(
        f"path {path!r} {why}",
        code="invalid_path",
        status=400,
        action="give a path relative to the workspace root, without '..', e.g. artifacts/report.md",
    )


def _missing(path: str) -> NotFound:
    return NotFound(f"{path!r} does not exist in your workspace", action="list the workspace with /runtime/volume/tree")


def resolve_in_workspace(root: Path, path: str) -> Path:
    """The real path of `path` inside `root`; 400 `invalid_path` for traversal, 404 when missing."""
    if "\x00" in path:
        raise invalid_path(path, "contains a NUL byte")
    posix = PurePosixPath(path.replace("\\", "/"))
    if posix.is_absolute() or path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        raise invalid_path(path, "is absolute")
    if ".." in posix.parts:
        raise invalid_path(path, "leaves the workspace ('..')")
    real_root = root.resolve()
    candidate = (real_root / posix).resolve()
    if not candidate.is_relative_to(real_root):
        raise invalid_path(path, "resolves outside the workspace (symlink)")
    if not os.path.lexists(candidate):
        raise _missing(path)
    return candidate


def _mtime(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def list_tree(root: Path, path: str, *, max_depth: int, max_entries: int) -> VolumeTree:
    """Entries under `path`: each directory's entries by name, then its subdirectories; never follows symlinks."""
    start = resolve_in_workspace(root, path) if path else root.resolve()
    if not start.is_dir():
        raise FleetError(f"{path!r} is not a directory", code="not_a_directory", status=400, action="use /volume/file")
    real_root = root.resolve()
    entries: list[VolumeEntry] = []
    truncated = False
    stack: list[tuple[Path, int]] = [(start, 1)]
    while stack and not truncated:
        directory, depth = stack.pop()
        try:
            children = sorted(os.scandir(directory), key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        subdirs: list[tuple[Path, int]] = []
        for entry in reversed(children):
            if len(entries) >= max_entries:
                truncated = True
                break
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            kind = _kind(info.st_mode)
            rel = Path(entry.path).relative_to(real_root).as_posix()
            entries.append(
                VolumeEntry(
                    path=rel, name=entry.name, type=kind, size=info.st_size, mtime=_mtime(info.st_mtime), depth=depth
                )
            )
            if kind == "dir" and depth < max_depth:
                subdirs.append((Path(entry.path), depth + 1))
        stack.extend(reversed(subdirs))
    rel_start = start.relative_to(real_root).as_posix()
    return VolumeTree(
        root="" if rel_start == "." else rel_start, entries=entries, truncated=truncated, max_depth=max_depth
    )


def open_confined(root: Path, path: str) -> tuple[int, os.stat_result]:
    """An O_RDONLY|O_NOFOLLOW descriptor of a regular file inside the workspace, and its stat."""
    real = resolve_in_workspace(root, path)
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError as exc:
        raise _missing(path) from exc
    except OSError as exc:  # ELOOP: the final component became a symlink after resolving
        raise invalid_path(path, "changed into a symlink") from exc
    try:
        info = os.fstat(fd)
        proc_link = f"/proc/self/fd/{fd}"
        if os.path.exists(proc_link) and not Path(os.readlink(proc_link)).is_relative_to(root.resolve()):
            raise invalid_path(path, "resolves outside the workspace")
        if not stat.S_ISREG(info.st_mode):
            raise FleetError(f"{path!r} is not a file", code="not_a_file", status=400, action="use /volume/tree")
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_file(root: Path, path: str, *, max_bytes: int = FILE_MAX_BYTES) -> VolumeFile:
    """The first `max_bytes` of a file: UTF-8 text when it decodes, else base64; `truncated` when cut."""
    fd, info = open_confined(root, path)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(max_bytes + 1)
    truncated = len(data) > max_bytes
    data = data[:max_bytes]
    encoding, content = _encode(data, truncated)
    return VolumeFile(
        path=PurePosixPath(path).as_posix(),
        size=info.st_size,
        mtime=_mtime(info.st_mtime),
        encoding=encoding,  # type: ignore[arg-type]
        content=content,
        truncated=truncated,
    )


def _encode(data: bytes, truncated: bool) -> tuple[str, str]:
    for cut in range(4 if truncated else 1):  # a cut may split a multi-byte character
        try:
            return "utf-8", data[: len(data) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return "base64", base64.b64encode(data).decode("ascii")
