"""Where a fake sandbox's paths live on the host, and how its processes are launched.

Each sandbox owns a private host directory (its "root"). Guest paths such as /home/daytona, /workspace or /tmp
map into that root; volume mounts map their guest path onto <volume_dir>/<subpath>. With bubblewrap available
the sandbox's processes run in a mount namespace where those guest paths really exist (the rest of the host
file system is bound read-only), so absolute paths in commands just work. Without bubblewrap the fake
falls back to running with the cwd mapped and guest path prefixes rewritten in command strings
(reduced fidelity).
Neither mode is a security boundary: this is a test fake.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HOME = "/home/daytona"
PRIVATE_TOP_LEVEL = ("context", "home", "tmp", "workspace")  # top-level dirs a real sandbox may create


@dataclass(frozen=True)
class Mount:
    """A volume (sub)directory on the host shown at `guest_path` inside the sandbox."""

    guest_path: str
    host_dir: Path


@functools.cache
def bwrap_available() -> bool:
    """True when bubblewrap can create a mount namespace here (probed once per process)."""
    exe = shutil.which("bwrap")
    if not exe:
        return False
    try:
        probe = subprocess.run([exe, "--ro-bind", "/", "/", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


def normalize_guest(path: str, cwd: str = HOME) -> str:
    """Absolute, normalized guest path; relative paths are relative to `cwd` (the work dir by default)."""
    return posixpath.normpath(posixpath.join(cwd or HOME, path or "."))


class SandboxFS:
    """Guest <-> host path translation plus the argv/cwd/env to run a process "inside" the sandbox."""

    def __init__(self, root: Path, mounts: list[Mount], *, use_bwrap: bool | None = None) -> None:
        self.root = root
        self.mounts = sorted(mounts, key=lambda m: len(m.guest_path), reverse=True)
        self.use_bwrap = bwrap_available() if use_bwrap is None else use_bwrap
        for top in PRIVATE_TOP_LEVEL:
            (root / top).mkdir(parents=True, exist_ok=True)
        (root / HOME.lstrip("/")).mkdir(parents=True, exist_ok=True)
        for mount in self.mounts:
            mount.host_dir.mkdir(parents=True, exist_ok=True)
            (root / mount.guest_path.lstrip("/")).mkdir(parents=True, exist_ok=True)

    def to_host(self, guest: str, cwd: str = HOME) -> Path:
        path = normalize_guest(guest, cwd)
        for mount in self.mounts:
            if path == mount.guest_path or path.startswith(mount.guest_path + "/"):
                rest = path[len(mount.guest_path) :].lstrip("/")
                return mount.host_dir / rest if rest else mount.host_dir
        return self.root / path.lstrip("/") if path != "/" else self.root

    def to_guest(self, host: Path) -> str:
        """Guest path of a host path under the root or a mount (used for FIFOs the server creates)."""
        if not self.use_bwrap:
            return str(host)
        for mount in self.mounts:
            if host == mount.host_dir or mount.host_dir in host.parents:
                return posixpath.join(mount.guest_path, str(host.relative_to(mount.host_dir)))
        return "/" + str(host.relative_to(self.root))

    def rewrite(self, text: str) -> str:
        """Without a mount namespace, turn guest path prefixes in a command string into host paths."""
        if self.use_bwrap:
            return text
        prefixes = [m.guest_path for m in self.mounts] + [HOME, "/workspace"]
        for prefix in sorted(prefixes, key=len, reverse=True):
            pattern = re.compile(r"(?<![\w./-])" + re.escape(prefix) + r"(?=[/\s'\";:)]|$)")
            text = pattern.sub(str(self.to_host(prefix)).replace("\\", "\\\\"), text)
        return text

    def private_tops(self) -> list[str]:
        tops = set(PRIVATE_TOP_LEVEL)
        tops.update(m.guest_path.strip("/").split("/")[0] for m in self.mounts)
        return sorted(t for t in tops if t and t not in ("proc", "dev"))

    def command(self, argv: list[str], cwd: str = HOME) -> tuple[list[str], str]:
        """The host argv and host cwd that run `argv` with guest working directory `cwd`."""
        guest_cwd = normalize_guest(cwd)
        host_cwd = self.to_host(guest_cwd)
        host_cwd.mkdir(parents=True, exist_ok=True)
        if not self.use_bwrap:
            return argv, str(host_cwd)
        private = self.private_tops()
        args = ["bwrap", "--die-with-parent", "--proc", "/proc", "--dev", "/dev"]
        for entry in sorted(os.listdir("/")):
            src = "/" + entry
            if entry in private or entry in ("proc", "dev"):
                continue
            if os.path.islink(src):
                args += ["--symlink", os.readlink(src), src]
            elif os.path.isdir(src):
                args += ["--ro-bind", src, src]
        for top in private:
            host_top = self.root / top
            host_top.mkdir(parents=True, exist_ok=True)
            args += ["--bind", str(host_top), "/" + top]
        for mount in sorted(self.mounts, key=lambda m: m.guest_path.count("/")):
            args += ["--bind", str(mount.host_dir), mount.guest_path]
        args += ["--chdir", guest_cwd, "--", *argv]
        return args, str(self.root)

    def environment(self, *layers: dict[str, str] | None) -> dict[str, str]:
        """A clean environment: the sandbox user's basics, then each layer (sandbox env, request env)."""
        python_bin = str(Path(sys.executable).parent)
        env = {
            "PATH": f"{python_bin}:{os.environ.get('PATH', '/usr/local/bin:/usr/bin:/bin')}",
            "HOME": HOME if self.use_bwrap else str(self.to_host(HOME)),
            "USER": "daytona",
            "LANG": "C.UTF-8",
        }
        for layer in layers:
            env.update(layer or {})
        return env
