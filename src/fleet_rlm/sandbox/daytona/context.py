"""A Daytona sandbox's copy of one session's context: uploaded from the host, read-only, that session's only.

The host's `<data_dir>/sessions/<id>/context/` is the source of truth (see `sandbox.context_view`); a Daytona
sandbox cannot bind it, so its files are uploaded into the sandbox's own file system - never onto the
workspace volume, which every session of the workspace mounts. The directory is `/context` (created by the
toolbox before the worker starts, so guest code never ran there yet), or `~/.fleet-context` when the toolbox
may not create top-level directories. After each upload everything is made read-only (`chmod -R a-w`): a
guest that is not root (Daytona's default user) cannot write, unlink or rename it. A sandbox serves one session
(session sandboxes are labelled by session; children get one-off sandboxes attached to their parent's
session); what it was given is remembered per sandbox, so later turns upload only new documents and delete
those removed from the session since. The host
never reads this copy back, so a guest with sudo in its image can change only its own view.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from daytona import AsyncSandbox, FileUpload

from fleet_rlm.sandbox.context_view import GUEST_CONTEXT, REPOS_SUBDIR, session_context_dir
from fleet_rlm.sandbox.daytona.client import DaytonaClient, DaytonaUnavailable

FALLBACK_DIR = ".fleet-context"  # relative to the sandbox user's home


@dataclass
class SandboxContext:
    """What one sandbox holds of its session's context."""

    guest_dir: str
    session_id: str | None = None
    uploaded: set[str] = field(default_factory=set)


def ensure_context_dir(client: DaytonaClient, sandbox: AsyncSandbox) -> str:
    """Create the sandbox's context directory (before any worker of it runs) and return its guest path."""

    async def create(sb: AsyncSandbox) -> str:
        try:
            await sb.fs.create_folder(GUEST_CONTEXT, "755")
            return GUEST_CONTEXT
        except Exception:  # e.g. the toolbox runs as an unprivileged user
            home = (await sb.get_user_home_dir()) or "/root"
            path = f"{home.rstrip('/')}/{FALLBACK_DIR}"
            await sb.fs.create_folder(path, "755")
            return path

    return client.run_in_sandbox(sandbox, "create the context directory", create)


def _pending(source: Path, uploaded: set[str]) -> tuple[list[str], list[tuple[Path, str]]]:
    """Top-level names not uploaded yet, and (host file, relative path) pairs to upload for them."""
    names: list[str] = []
    files: list[tuple[Path, str]] = []

    def visit(name: str) -> None:
        host = source / name
        if host.is_symlink():
            return
        if host.is_file():
            names.append(name)
            files.append((host, name))
        elif host.is_dir():
            names.append(name)
            for current, dirs, found in os.walk(host, followlinks=False):
                dirs.sort()
                rel = os.path.relpath(current, source)
                for item in sorted(found):
                    path = Path(current) / item
                    if not path.is_symlink():
                        files.append((path, f"{rel}/{item}"))

    if not source.is_dir():
        return names, files
    for entry in sorted(os.listdir(source)):
        if entry.startswith("."):
            continue
        if entry == REPOS_SUBDIR and (source / entry).is_dir():
            for repo in sorted(os.listdir(source / entry)):
                if not repo.startswith(".") and f"{entry}/{repo}" not in uploaded:
                    visit(f"{entry}/{repo}")
        elif entry not in uploaded:
            visit(entry)
    return names, files


def sync_context(
    client: DaytonaClient, sandbox: AsyncSandbox, state: SandboxContext, data_dir: Path, session_id: str
) -> None:
    """Upload `session_id`'s documents the sandbox lacks, then make them read-only."""
    if state.session_id is not None and state.session_id != session_id:
        raise DaytonaUnavailable(
            f"this Daytona sandbox already serves session {state.session_id}",
            code="daytona_sandbox_mismatch",
            action="start a new sandbox for this session",
        )
    state.session_id = session_id
    host_dir = session_context_dir(data_dir, session_id)
    names, files = _pending(host_dir, state.uploaded)
    removed = sorted(name for name in state.uploaded if not (host_dir / name).exists())
    if not names and not removed:
        return
    base = state.guest_dir.rstrip("/")
    uploads = [FileUpload(str(host), f"{base}/{rel}") for host, rel in files]
    script = ""
    if removed:  # removed from the session since the last lease: the directory stays writable by its owner
        gone = " ".join(shlex.quote(f"{base}/{name}") for name in removed)
        script += f"chmod -R u+w {gone} 2>/dev/null; rm -rf {gone}; "
    if names:
        targets = " ".join(shlex.quote(f"{base}/{name}") for name in names)
        script += f"chmod -R a-w {targets} 2>/dev/null; "
    command = f"sh -c {shlex.quote(script + 'true')}"

    async def upload(sb: AsyncSandbox) -> None:
        if uploads:
            await sb.fs.upload_files(uploads)
        await sb.process.exec(command, timeout=60)

    client.run_in_sandbox(sandbox, "upload the session's context", upload)
    state.uploaded.difference_update(removed)
    state.uploaded.update(names)
