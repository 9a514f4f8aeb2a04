"""Read-only, workspace-confined access to a user's volume (the durable roots their sandboxes write).

Every path is relative to the workspace root. `..`, absolute paths and NUL bytes are refused outright. The
workspace is guest-writable, so nothing is resolved by name: `sandbox.guestfs` walks each component from the
root's descriptor without following links. A link anywhere on the path (to /etc/passwd, another workspace,
`/proc/1/root/...`, itself) is a clean 400, never followed, never a 500; a swap between check and open cannot
escape because there is no separate check.
"""

from __future__ import annotations

import base64
import itertools
import os
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from fleet_rlm.errors import FleetError, NotFound
from fleet_rlm.sandbox import guestfs
from fleet_rlm.schemas.volume import VolumeEntry, VolumeFile, VolumeTree

FILE_MAX_BYTES = 1024 * 1024
TREE_MAX_DEPTH = 8
TREE_MAX_ENTRIES = 5000


def invalid_path(path: str, why: str) -> FleetError:
    return FleetError(
        f"path {path!r} {why}",
        code="invalid_path",
        status=400,
        action="give a path relative to the workspace root, without '..' or links, e.g. artifacts/report.md",
    )


def _missing(path: str) -> NotFound:
    return NotFound(f"{path!r} does not exist in your workspace", action="list the workspace with /runtime/volume/tree")


def _not_a_file(path: str) -> FleetError:
    return FleetError(f"{path!r} is not a file", code="not_a_file", status=400)


def _not_a_directory(path: str) -> FleetError:
    return FleetError(f"{path!r} is not a directory", code="not_a_directory", status=400, action="use /volume/file")


def volume_error(path: str, exc: OSError, *, want: str) -> FleetError:
    """The 4xx of a refused access; `want` ("file" or "dir") words the wrong-type errors."""
    kind = exc.kind if isinstance(exc, guestfs.GuestPathError) else "unreadable"
    if kind == "missing":
        return _missing(path)
    if kind == "not_dir":
        return _not_a_directory(path) if want == "dir" else _missing(path)
    if kind == "not_file" or (kind == "special" and want == "file"):
        return _not_a_file(path) if want == "file" else _not_a_directory(path)
    if kind == "special":
        return _not_a_directory(path)
    why = exc.why if isinstance(exc, guestfs.GuestPathError) else f"cannot be read ({type(exc).__name__})"
    return invalid_path(path, why)


def _mtime(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def list_tree(root: Path, path: str, *, max_depth: int, max_entries: int) -> VolumeTree:
    """Entries under `path`: each directory's entries by name, then its subdirectories; never follows symlinks."""
    try:
        start = guestfs.normalized(path)
        if guestfs.kind_of(guestfs.lstat(root, start).st_mode) == "file":
            raise _not_a_directory(path)
        walked = guestfs.walk(root, start, max_depth=max_depth, max_entries=max_entries + 1)
        found = list(itertools.islice(walked, max_entries + 1))
    except OSError as exc:
        raise volume_error(path, exc, want="dir") from None
    entries = [
        VolumeEntry(
            path=e.rel,
            name=e.name,
            type=e.kind,
            size=e.size,
            mtime=_mtime(e.mtime),
            depth=e.depth,  # type: ignore[arg-type]
        )
        for e in found[:max_entries]
    ]
    return VolumeTree(root=start, entries=entries, truncated=len(found) > max_entries, max_depth=max_depth)


def open_confined(root: Path, path: str) -> tuple[int, os.stat_result]:
    """An O_RDONLY descriptor of a regular file inside the workspace (reached without following links), and its stat."""
    try:
        return guestfs.open_file(root, path)
    except OSError as exc:
        raise volume_error(path, exc, want="file") from None


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
