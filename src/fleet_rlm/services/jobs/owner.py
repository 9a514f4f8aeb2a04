"""Which server process owns a job (`host:pid` in the job's row), and whether that process is gone."""

from __future__ import annotations

import os
import socket


def process_owner() -> str:
    """Identifies this server process in a job's `owner` column, so the sweeper can tell dead owners apart."""
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_is_dead(owner: str | None, *, current_owner: str) -> bool:
    """True when `owner` names a process on this host that no longer exists (never for this process)."""
    if not owner or owner == current_owner:
        return False
    host, _, pid_text = owner.rpartition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
