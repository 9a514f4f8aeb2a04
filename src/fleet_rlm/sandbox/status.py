"""What isolation this host can give: used by the launcher, `/ready` and `fleet doctor`.

bubblewrap is probed once per process (one `bwrap ... true` run, a few ms) because a binary that exists can
still fail (no user namespaces, seccomp in a container); only a sandbox that actually started counts.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from typing import Any, Literal

IsolationLevel = Literal["bubblewrap", "reduced"]


@functools.lru_cache(maxsize=1)
def _probe() -> tuple[str | None, str | None, str]:
    """(bwrap path, version, reason) — reason explains why isolation is reduced, empty when it works."""
    path = shutil.which("bwrap")
    if path is None:
        return None, None, "bubblewrap (bwrap) is not installed"
    try:
        version = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=5, check=False
        ).stdout.strip()
        probe = subprocess.run(
            [path, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "true"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return path, None, f"bubblewrap failed to run: {exc}"
    if probe.returncode != 0:
        detail = probe.stderr.strip().splitlines()[-1:] or ["exit status " + str(probe.returncode)]
        return path, version or None, f"bubblewrap cannot create namespaces here: {detail[0]}"
    return path, version or None, ""


def bwrap_path() -> str | None:
    path, _, reason = _probe()
    return path if not reason else None


def isolation_level() -> IsolationLevel:
    return "bubblewrap" if bwrap_path() else "reduced"


def sandbox_status(backend: str = "local") -> dict[str, Any]:
    """Summary for /ready and doctor: backend, isolation level, bwrap path/version, and why if reduced."""
    path, version, reason = _probe()
    level = isolation_level()
    return {
        "backend": backend,
        "isolation": level,
        "bwrap_path": path,
        "bwrap_version": version,
        "reason": reason or "processes run in bubblewrap namespaces with resource limits",
    }


def probe_again() -> None:
    """Forget the cached probe, so the next check looks at the host again (bubblewrap just installed or removed)."""
    _probe.cache_clear()
