"""Durable workspace roots: `<data_dir>/workspaces/<workspace_id>/{memory,artifacts,buffers,meta}`.

They outlive every sandbox: a replaced or re-leased sandbox sees the same files. Under bubblewrap the guest
sees the workspace at `GUEST_ROOT` (/workspace, the path the Daytona backend mounts too); without bubblewrap
it sees the real host path. Only the host creates the roots; the guest only reads and writes inside them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from fleet_rlm.errors import InvalidInput

GUEST_ROOT = "/workspace"
SUBDIRS = ("memory", "artifacts", "buffers", "meta")
MEMORIES_FILE = "MEMORIES.md"
MEMORIES_HEADER = "# Memories\n\nDurable notes for this workspace, kept across sessions and sandboxes.\n"
_WORKSPACE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


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


def ensure_roots(workspaces_dir: Path, workspace_id: str, *, sandbox_gid: int | None = None) -> WorkspaceRoots:
    """Create the roots (idempotent). With `sandbox_gid`, make them group-writable for unprivileged workers.

    When the host runs as root, each sandbox runs under its own uid (so RLIMIT_NPROC applies) and a shared
    group; setgid directories (mode 2770) let successive sandboxes of one workspace edit each other's files.
    """
    validate_workspace_id(workspace_id)
    workspaces_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(workspaces_dir, 0o700)
    root = workspaces_dir / workspace_id
    for path in (root, *(root / sub for sub in SUBDIRS)):
        path.mkdir(exist_ok=True)
        if sandbox_gid is not None:
            os.chown(path, -1, sandbox_gid)
            os.chmod(path, 0o2770)
    memories = root / "memory" / MEMORIES_FILE
    if not memories.exists():
        memories.write_text(MEMORIES_HEADER, encoding="utf-8")
        if sandbox_gid is not None:
            os.chown(memories, -1, sandbox_gid)
            os.chmod(memories, 0o660)
    return WorkspaceRoots(workspace_id, root)
