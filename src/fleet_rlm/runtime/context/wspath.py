"""User-given paths inside the workspace, checked and read only through `sandbox.guestfs`.

Relative paths only, no `..` component (even one that would stay inside: the rule is easier to trust than the
arithmetic). The workspace is guest-writable, so nothing is resolved by name: every component is opened
relative to its parent's descriptor without following links, and a link anywhere on the way is refused (even
one pointing inside: the guest can swap its target at any moment).
"""

from __future__ import annotations

from pathlib import Path

from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context.failures import PATH_INVALID, context_error
from fleet_rlm.sandbox import guestfs

_STATUS = {"missing": 404, "not_dir": 404, "link": 403, "linked": 403}


def _invalid(raw: str, why: str, *, status: int = 422) -> FleetError:
    return context_error(
        PATH_INVALID,
        f"workspace path {raw[:200]!r} {why}",
        "give a path relative to the workspace root, e.g. memory/notes.md or artifacts/",
        status=status,
        path=raw[:500],
    )


def path_error(raw: str, exc: OSError) -> FleetError:
    """The typed error of a refused or failed workspace access (never a bare OSError)."""
    if isinstance(exc, guestfs.GuestPathError):
        why = "does not exist" if exc.kind in ("missing", "not_dir") else exc.why
        return _invalid(raw, why, status=_STATUS.get(exc.kind, 422))
    return _invalid(raw, f"cannot be read ({type(exc).__name__})")


def workspace_entry(workspace_dir: Path, raw: str) -> tuple[str, str]:
    """(normalized relative path, "file" or "dir") of an existing entry, reached without following any link."""
    if not raw or not raw.strip():
        raise _invalid(raw, "is empty or malformed")
    try:
        relative = guestfs.normalized(raw)
        kind = guestfs.kind_of(guestfs.lstat(workspace_dir, relative).st_mode)
    except OSError as exc:
        raise path_error(raw, exc) from None
    if kind == "symlink":
        raise _invalid(raw, "is a symbolic link", status=403)
    if kind == "other":
        raise _invalid(raw, "is not a regular file or directory (FIFO, socket or device)")
    return relative, kind


def read_workspace_bytes(workspace_dir: Path, relative: str, *, max_bytes: int) -> tuple[bytes, int]:
    """(at most `max_bytes` of the file, its full size); a link or special file swapped in meanwhile is refused."""
    try:
        data, info = guestfs.read_bytes(workspace_dir, relative, max_bytes=max_bytes)
    except OSError as exc:
        raise path_error(relative, exc) from None
    return data, info.st_size
