"""The only way host code touches guest-writable trees (a workspace: `<data_dir>/workspaces/<id>/...`).

The guest can rename, replace and link anything under its workspace while the host works on it, so a check
made on a path name before an open proves nothing. Every access here starts from a descriptor of a trusted
root and walks one component at a time with `os.open(name, O_NOFOLLOW | O_DIRECTORY, dir_fd=parent)`; the final
component is opened with `O_NOFOLLOW | O_NONBLOCK` and `fstat`ed, and only a regular file is accepted. A
symlink anywhere on the way, a FIFO, a socket or a device is refused, never followed, so no swap can redirect
the host outside the root and no loop can make it spin. Listings use `scandir(fd)` with `lstat` semantics,
modes and groups are set with `fchmod`/`fchown` on the opened descriptor, never by name.

Failures raise `GuestPathError` (an `OSError`, so callers that treat unreadable files as absent keep working)
with a `kind` that callers map to their own typed errors. `tests/security/test_guestfs_gate.py` fails when
other modules use path-based file APIs, so new code cannot quietly bypass this module.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
WRITE_MODES = os.O_WRONLY | os.O_RDWR
WALK_MAX_DEPTH = 32
WALK_MAX_ENTRIES = 100_000
LIST_MAX_ENTRIES = 100_000

ERRNO = {"invalid": errno.EINVAL, "missing": errno.ENOENT, "link": errno.ELOOP, "special": errno.EINVAL}
ERRNO |= {"not_dir": errno.ENOTDIR, "not_file": errno.EISDIR, "linked": errno.EMLINK, "exists": errno.EEXIST}


class GuestPathError(OSError):
    """A path the host refuses. `kind`: invalid | missing | link | special | not_dir | not_file | linked | exists."""

    def __init__(self, kind: str, path: str, why: str) -> None:
        super().__init__(ERRNO[kind], why, path)
        self.kind = kind
        self.path = path
        self.why = why


@dataclass(frozen=True)
class Entry:
    """One directory entry as `lstat` saw it through the parent's descriptor (links are never followed)."""

    rel: str
    name: str
    kind: str  # dir | file | symlink | other
    size: int
    mtime: float
    mtime_ns: int
    depth: int


def kind_of(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def parts_of(rel: str) -> tuple[str, ...]:
    """The components of a relative path; refuses NUL, absolute paths, `~` and any `..` (even one that stays in)."""
    if "\x00" in rel:
        raise GuestPathError("invalid", rel, "contains a NUL byte")
    posix = rel.replace("\\", "/")
    if posix.startswith(("/", "~")) or (len(posix) > 1 and posix[1] == ":"):
        raise GuestPathError("invalid", rel, "is absolute")
    parts = tuple(part for part in PurePosixPath(posix).parts if part not in ("", "."))
    if ".." in parts:
        raise GuestPathError("invalid", rel, "contains '..'")
    return parts


def normalized(rel: str) -> str:
    return "/".join(parts_of(rel))


def open_root(root: Path | str) -> int:
    """A descriptor of the trusted root itself (host-created; its own name must not be a link either)."""
    try:
        return os.open(root, DIR_FLAGS)
    except FileNotFoundError:
        raise GuestPathError("missing", "", "the root does not exist") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise GuestPathError("link", "", "the root is not a plain directory") from None
        raise


def open_host_dir(path: Path | str, *, create: bool = False, mode: int = 0o700) -> int:
    """A host-owned directory that holds guest trees (e.g. `workspaces/`): no guest can write it or its parents,
    so it may be resolved by name (an operator may have made it a link to another disk)."""
    if create:
        os.makedirs(path, mode=mode, exist_ok=True)
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def _classify(dir_fd: int, name: str, shown: str, exc: OSError) -> GuestPathError | OSError:
    """Why opening `name` failed, for the message only: the decision was already made by the kernel."""
    if exc.errno == errno.ENOENT:
        return GuestPathError("missing", shown, "does not exist")
    if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO, errno.EISDIR):
        return exc
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        return GuestPathError("missing", shown, "does not exist")
    if stat.S_ISLNK(mode):
        return GuestPathError("link", shown, "is or passes through a symbolic link")
    if stat.S_ISDIR(mode):
        return GuestPathError("not_file", shown, "is a directory")
    if stat.S_ISREG(mode):
        return GuestPathError("not_dir", shown, "is not a directory")
    return GuestPathError("special", shown, "is not a regular file (FIFO, socket or device)")


def child_dir(dir_fd: int, name: str, *, shown: str = "", create: bool = False, mode: int = 0o755) -> int:
    """A descriptor of the directory `name` under `dir_fd`, never through a link; created when asked."""
    shown = shown or name
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, mode, dir_fd=dir_fd)
    try:
        return os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise _classify(dir_fd, name, shown, exc) from None


def open_dir(root: Path | str, rel: str, *, create: bool = False, mode: int = 0o755) -> int:
    """A descriptor of the directory `root/rel`, walked one component at a time (the root itself for "")."""
    parts = parts_of(rel)
    fd = open_root(root)
    try:
        for depth, name in enumerate(parts, 1):
            nxt = child_dir(fd, name, shown="/".join(parts[:depth]), create=create, mode=mode)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def dir_at(root: Path | str, rel: str, *, create: bool = False, mode: int = 0o755) -> Iterator[int]:
    fd = open_dir(root, rel, create=create, mode=mode)
    try:
        yield fd
    finally:
        os.close(fd)


def _parent_and_name(rel: str) -> tuple[str, str]:
    parts = parts_of(rel)
    if not parts:
        raise GuestPathError("not_file", rel, "is the root directory")
    return "/".join(parts[:-1]), parts[-1]


def child_file(dir_fd: int, name: str, flags: int = os.O_RDONLY, *, shown: str = "", mode: int = 0o600) -> int:
    """A descriptor of the regular file `name` under `dir_fd`: no link, FIFO, socket or device; blocking again.

    Writes also refuse a file with more than one hard link, which could be a host file linked in.
    """
    shown = shown or name
    try:
        fd = os.open(name, flags | FILE_FLAGS, mode, dir_fd=dir_fd)
    except OSError as exc:
        raise _classify(dir_fd, name, shown, exc) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise GuestPathError("not_file", shown, "is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise GuestPathError("special", shown, "is not a regular file (FIFO, socket or device)")
        if flags & WRITE_MODES and info.st_nlink > 1:
            raise GuestPathError("linked", shown, "has other hard links; refusing to write it")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(root: Path | str, rel: str, flags: int = os.O_RDONLY, *, mode: int = 0o600) -> tuple[int, os.stat_result]:
    """A descriptor of the regular file `root/rel` and its `fstat`; `flags` may add O_WRONLY, O_APPEND, O_CREAT..."""
    parent, name = _parent_and_name(rel)
    with dir_at(root, parent) as dir_fd:
        fd = child_file(dir_fd, name, flags, shown=normalized(rel), mode=mode)
    return fd, os.fstat(fd)


def read_bytes(root: Path | str, rel: str, *, max_bytes: int, tail: bool = False) -> tuple[bytes, os.stat_result]:
    """At most `max_bytes` of a regular file (its head, or its tail with `tail=True`) and its `fstat`."""
    fd, info = open_file(root, rel)
    with os.fdopen(fd, "rb") as handle:
        if tail and info.st_size > max_bytes:
            handle.seek(info.st_size - max_bytes)
        return handle.read(max_bytes), info


def write_bytes(
    root: Path | str,
    rel: str,
    data: bytes,
    *,
    append: bool = False,
    exclusive: bool = False,
    mode: int = 0o644,
    gid: int | None = None,
) -> None:
    """Write (truncate), append or create-exclusively `root/rel`; a new file gets `mode` (and `gid`) by descriptor."""
    parent, name = _parent_and_name(rel)
    shown = normalized(rel)
    with dir_at(root, parent) as dir_fd:
        try:
            fd = child_file(dir_fd, name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, shown=shown, mode=mode)
        except FileExistsError:
            if exclusive:
                raise GuestPathError("exists", shown, "already exists") from None
            # no O_TRUNC: child_file refuses a hard-linked file only after open(), which O_TRUNC would already
            # have emptied; truncate once the descriptor passed its checks
            fd = child_file(dir_fd, name, os.O_WRONLY | (os.O_APPEND if append else 0), shown=shown)
            if not append:
                try:
                    os.ftruncate(fd, 0)
                except BaseException:
                    os.close(fd)
                    raise
        else:
            try:
                set_owner_mode(fd, mode=mode, gid=gid)
            except BaseException:
                os.close(fd)
                raise
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def set_owner_mode(fd: int, *, mode: int | None = None, gid: int | None = None) -> None:
    """`fchown`/`fchmod` an opened descriptor (group first: chown clears setgid bits)."""
    if gid is not None:
        os.fchown(fd, -1, gid)
    if mode is not None:
        os.fchmod(fd, mode)


def make_dirs(root: Path | str, rel: str, *, mode: int = 0o755) -> None:
    """Create `root/rel` and its missing parents, one component at a time, never through a link."""
    os.close(open_dir(root, rel, create=True, mode=mode))


def lstat(root: Path | str, rel: str) -> os.stat_result:
    """The entry `root/rel` itself (a link is reported as a link); its parents are walked without following."""
    parts = parts_of(rel)
    if not parts:
        with dir_at(root, "") as fd:
            return os.fstat(fd)
    parent, name = "/".join(parts[:-1]), parts[-1]
    with dir_at(root, parent) as dir_fd:
        try:
            return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            raise GuestPathError("missing", normalized(rel), "does not exist") from None


def entries_of(
    dir_fd: int, *, prefix: str = "", depth: int = 1, limit: int = LIST_MAX_ENTRIES
) -> tuple[list[Entry], bool]:
    """The entries of an opened directory, sorted by name, at most `limit` read; (entries, truncated)."""
    found: list[Entry] = []
    truncated = False
    with os.scandir(dir_fd) as scan:
        for item in scan:
            if len(found) >= limit:
                truncated = True
                break
            try:
                info = item.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = f"{prefix}/{item.name}" if prefix else item.name
            found.append(
                Entry(rel, item.name, kind_of(info.st_mode), info.st_size, info.st_mtime, info.st_mtime_ns, depth)
            )
    found.sort(key=lambda entry: entry.name)
    return found, truncated


def list_dir(root: Path | str, rel: str = "", *, limit: int = LIST_MAX_ENTRIES) -> tuple[list[Entry], bool]:
    """The entries of the directory `root/rel` (paths relative to `root`); (entries, truncated)."""
    prefix = normalized(rel)
    with dir_at(root, prefix) as fd:
        return entries_of(fd, prefix=prefix, limit=limit)


def walk(
    root: Path | str,
    rel: str = "",
    *,
    max_depth: int = WALK_MAX_DEPTH,
    max_entries: int = WALK_MAX_ENTRIES,
    skip_dirs: frozenset[str] = frozenset(),
) -> Iterator[Entry]:
    """Every entry under `root/rel`: a directory's entries by name, then each subdirectory's, depth first.

    Subdirectories are opened relative to their parent's descriptor with O_NOFOLLOW, so a link is listed and
    never entered (loops are impossible); at most `max_depth` levels and `max_entries` entries; an entry
    swapped or removed meanwhile is skipped. At most `max_depth` descriptors are open at once.
    """
    start = normalized(rel)
    budget = [max_entries]
    with dir_at(root, start) as fd:
        yield from _walk(fd, start, 1, max_depth, budget, skip_dirs)


def _walk(
    dir_fd: int, prefix: str, depth: int, max_depth: int, budget: list[int], skip: frozenset[str]
) -> Iterator[Entry]:
    entries, _ = entries_of(dir_fd, prefix=prefix, depth=depth, limit=budget[0])
    budget[0] -= len(entries)
    yield from entries
    if depth >= max_depth:
        return
    for entry in entries:
        if entry.kind != "dir" or entry.name in skip or budget[0] <= 0:
            continue
        try:
            sub = child_dir(dir_fd, entry.name, shown=entry.rel)
        except OSError:  # replaced by a link or removed since it was listed: not entered
            continue
        try:
            yield from _walk(sub, entry.rel, depth + 1, max_depth, budget, skip)
        finally:
            os.close(sub)


def displace(dir_fd: int, name: str) -> str:
    """Rename the entry `name` aside (the link itself, never its target) so a clean one can take its place."""
    aside = f"{name}.displaced-{secrets.token_hex(4)}"
    os.rename(name, aside, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    return aside


def remove_file(root: Path | str, rel: str) -> None:
    """Unlink the file (or the link itself, never its target) at `rel`; a directory is refused ("not_file").

    A swap between the check and the unlink cannot reach outside: both are relative to the parent's descriptor,
    and unlinking a directory fails on its own."""
    parent, name = _parent_and_name(rel)
    with dir_at(root, parent) as dir_fd:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if kind_of(info.st_mode) == "dir":
            raise GuestPathError("not_file", rel, "is a directory")
        os.unlink(name, dir_fd=dir_fd)


def remove_tree(parent: Path | str, name: str) -> None:
    """Remove the guest-writable tree `parent/name` without ever following a link inside it.

    `parent` is host-trusted; every entry below is removed relative to its directory's descriptor
    (shutil's fd-based walk, which unlinks a symlink instead of entering it). A missing tree is fine.
    """
    if not shutil.rmtree.avoids_symlink_attacks:  # pragma: no cover - every Linux Python has the fd-based walk
        raise OSError(errno.ENOTSUP, "this platform cannot remove a tree without following links")
    if os.sep in name or name in ("", ".", ".."):
        raise ValueError(f"not a single path component: {name!r}")
    parent_fd = open_host_dir(parent)
    try:
        shutil.rmtree(name, dir_fd=parent_fd, ignore_errors=True)
    finally:
        os.close(parent_fd)
