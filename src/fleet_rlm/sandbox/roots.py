"""Durable workspace roots: `<data_dir>/workspaces/<workspace_id>/{memory,artifacts,buffers,meta}`.

They outlive every sandbox: a replaced or re-leased sandbox sees the same files. Under bubblewrap the guest
sees the workspace at `GUEST_ROOT` (/workspace, the path the Daytona backend mounts too); without bubblewrap
it sees the real host path. Only the host creates the roots; the guest only reads and writes inside them.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from fleet_rlm.errors import InvalidInput, Unavailable
from fleet_rlm.sandbox import guestfs

GUEST_ROOT = "/workspace"
SUBDIRS = ("memory", "artifacts", "buffers", "meta")
MEMORIES_FILE = "MEMORIES.md"
MEMORIES_MODE = 0o660
ENSURE_ATTEMPTS = 3
SANDBOX_GID = 1_499_999_999
MEMORIES_HEADER = "# Memories\n\nDurable notes for this workspace, kept across sessions and sandboxes.\n"
_WORKSPACE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class WorkspaceUnavailable(Unavailable):
    code = "workspace_unavailable"


@dataclass(frozen=True)
class WorkspaceRoots:
    workspace_id: str
    host_root: Path

    def host(self, sub: str) -> Path:
        return self.host_root / sub

    @staticmethod
    def guest(sub: str | None = None, *, guest_root: str = GUEST_ROOT) -> str:
        return guest_root if sub is None else f"{guest_root}/{sub}"

    @property
    def memories_file(self) -> Path:
        return self.host_root / "memory" / MEMORIES_FILE


def validate_workspace_id(workspace_id: str) -> str:
    if not _WORKSPACE_ID.match(workspace_id) or workspace_id in {".", ".."}:
        raise InvalidInput(
            f"invalid workspace id {workspace_id!r}",
            code="invalid_workspace_id",
            action="use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit",
        )
    return workspace_id


def sandbox_gid() -> int | None:
    """The group workspace roots need on this host: the sandbox group when the host runs as root, else none.

    As root each bubblewrap worker runs as its own uid in `SANDBOX_GID`; as an ordinary user the worker keeps
    the host's uid (a root worker in reduced isolation ignores the group), so no group is needed.
    """
    return SANDBOX_GID if os.geteuid() == 0 else None


def ensure_roots(workspaces_dir: Path, workspace_id: str) -> WorkspaceRoots:
    """Create the roots (idempotent), with the modes and group this host's workers need, never through a link.

    Setgid directories (2770, group `sandbox_gid()`) let successive sandboxes of one workspace edit each other's
    files; MEMORIES.md is always 0660 in that group so the sandbox can append to it whoever created it. Every
    step is fd-relative (`guestfs`): a root the guest replaced by a link, file or FIFO is renamed aside
    (`<name>.displaced-<hex>`, the link itself, never its target) and created again; modes and groups are set on
    the opened descriptors. The guest cannot write `workspaces/` itself (0700, host-owned).
    """
    validate_workspace_id(workspace_id)
    for attempt in range(ENSURE_ATTEMPTS):
        try:
            return _ensure(workspaces_dir, workspace_id)
        except guestfs.GuestPathError:  # the guest raced a step (e.g. removed a root just made): do it again
            if attempt + 1 == ENSURE_ATTEMPTS:
                raise WorkspaceUnavailable(
                    f"the roots of workspace {workspace_id!r} keep changing under the server",
                    action="retry; if it persists, stop the workspace's running sandboxes",
                ) from None
    raise AssertionError("unreachable")


def _ensure(workspaces_dir: Path, workspace_id: str) -> WorkspaceRoots:
    gid = sandbox_gid()
    dir_mode = 0o2770 if gid is not None else 0o755
    top = guestfs.open_host_dir(workspaces_dir, create=True)
    try:
        guestfs.set_owner_mode(top, mode=0o700)
        root = _ensure_dir(top, workspace_id, mode=dir_mode, gid=gid)
    finally:
        os.close(top)
    try:
        for sub in SUBDIRS:
            fd = _ensure_dir(root, sub, mode=dir_mode, gid=gid)
            try:
                if sub == "memory":
                    _ensure_memories(fd, gid)
            finally:
                os.close(fd)
    finally:
        os.close(root)
    return WorkspaceRoots(workspace_id, workspaces_dir / workspace_id)


def _ensure_dir(parent: int, name: str, *, mode: int, gid: int | None) -> int:
    try:
        fd = guestfs.child_dir(parent, name, create=True, mode=mode)
    except guestfs.GuestPathError as exc:
        if exc.kind == "missing":
            raise
        with contextlib.suppress(FileNotFoundError):  # a concurrent ensure_roots moved it aside already
            guestfs.displace(parent, name)
        fd = guestfs.child_dir(parent, name, create=True, mode=mode)
    try:
        guestfs.set_owner_mode(fd, mode=mode, gid=gid)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _ensure_memories(memory: int, gid: int | None) -> None:
    """MEMORIES.md: created with the header, or repaired to 0660 and the sandbox group; never through a link."""
    for attempt in range(2):
        try:
            fd = guestfs.child_file(memory, MEMORIES_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode=MEMORIES_MODE)
            header = MEMORIES_HEADER.encode("utf-8")
        except FileExistsError:
            try:
                fd, header = guestfs.child_file(memory, MEMORIES_FILE, os.O_WRONLY | os.O_APPEND), b""
            except guestfs.GuestPathError:  # a link, FIFO, device, directory or hard-linked file: not memory
                if attempt:
                    raise
                with contextlib.suppress(FileNotFoundError):
                    guestfs.displace(memory, MEMORIES_FILE)
                continue
        with os.fdopen(fd, "wb") as handle:
            guestfs.set_owner_mode(fd, mode=MEMORIES_MODE, gid=gid)
            handle.write(header)
        return
