"""Uploads into and deletes from the caller's workspace volume: only under memory/ and artifacts/.

The workspace is guest-writable, so writes and deletes go through `sandbox.guestfs` like reads do: parents are
walked from the root's descriptor without following links, the file is opened O_NOFOLLOW (a planted link is a
clean 400) and a file with other hard links is never written; a delete unlinks the entry at its parent's
descriptor, so a link is removed itself, never its target. Everything else (buffers/, meta/, the session
context) is read-only here: `volume_read_only`.
"""

from __future__ import annotations

from pathlib import Path

from fleet_rlm.errors import FleetError
from fleet_rlm.sandbox import guestfs
from fleet_rlm.sandbox.roots import sandbox_gid
from fleet_rlm.schemas.volume import VolumeWrite
from fleet_rlm.services.volume import volume_error

WRITABLE = ("memory", "artifacts")


def _writable(path: str) -> str:
    try:
        rel = guestfs.normalized(path)
    except OSError as exc:
        raise volume_error(path, exc, want="file") from None
    parts = rel.split("/")
    if len(parts) < 2 or parts[0] not in WRITABLE:
        raise FleetError(
            f"{path!r} is read-only",
            code="volume_read_only",
            status=403,
            action="upload to or delete from memory/ or artifacts/ (context and buffers are read-only)",
        )
    return rel


def exists_error(path: str) -> FleetError:
    return FleetError(f"{path!r} already exists", code="file_exists", status=409, action="pass overwrite=true")


def write_file(root: Path, path: str, data: bytes, *, overwrite: bool) -> VolumeWrite:
    """Create (or with `overwrite`, replace the content of) a regular file; missing parent dirs are made."""
    rel = _writable(path)
    gid = sandbox_gid()
    try:
        parent = rel.rsplit("/", 1)[0]
        guestfs.make_dirs(root, parent, mode=0o2770 if gid is not None else 0o755)
        guestfs.write_bytes(root, rel, data, exclusive=not overwrite, mode=0o660 if gid is not None else 0o644, gid=gid)
    except guestfs.GuestPathError as exc:
        if exc.kind == "exists":
            raise exists_error(path) from None
        raise volume_error(path, exc, want="file") from None
    except OSError as exc:
        raise volume_error(path, exc, want="file") from None
    return VolumeWrite(path=rel, size=len(data))


def delete_file(root: Path, path: str) -> None:
    """Unlink a file (or a link itself) under memory/ or artifacts/; directories are refused."""
    rel = _writable(path)
    try:
        guestfs.remove_file(root, rel)
    except guestfs.GuestPathError as exc:
        if exc.kind == "not_file" and exc.why == "is a directory":
            raise FleetError(f"{path!r} is a directory", code="not_a_file", status=400) from None
        raise volume_error(path, exc, want="file") from None
    except FileNotFoundError:
        raise volume_error(path, guestfs.GuestPathError("missing", rel, "does not exist"), want="file") from None
    except OSError as exc:
        raise volume_error(path, exc, want="file") from None
