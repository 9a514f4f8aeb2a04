"""Where a session's context lives on the host, and how one sandbox sees it: read-only, that session's only.

Layout (all host-only: the guest can write none of it):
    <data_dir>/sessions/<session_id>/context/        documents (content-addressed files) written by the host
    <data_dir>/sessions/<session_id>/context/repos/  repository clones of that session
    <data_dir>/sandboxes/<host>-<pid>-<n>/           one local sandbox's view, bound read-only at /context

Why a per-sandbox view rather than binding the session directory: bubblewrap binds when the process starts,
and the pool starts spare sandboxes before any session is known. So every local sandbox gets its own empty
view directory at spawn (bound read-only at `GUEST_CONTEXT`), and when the sandbox is first used for a session
(`attach`) the host fills the view with *hard links* to that session's files: no copy of a 45 MB document,
and nothing of another session. A sandbox serves one session for its whole life (the pool never re-leases a
session's worker to another, and an ephemeral sandbox of a nested child is attached to its parent's session);
documents loaded by later turns are linked at each lease (`sync`), and documents removed from the session
since (`services.session_context.remove_source`) leave the view then. The view is removed with the sandbox (and
views a crashed process of this host left behind are pruned when the next process makes its first view).
The guest cannot change what it sees: the bind is read-only, and `link(2)` across mounts fails, so it cannot
link a context file into the writable workspace either. The host never reads a view back.
Reduced isolation has no mount namespace: the guest is told the view's real host path and, running as the
server's user, could read or write any session's files (see docs/security.md).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import socket
import threading
from pathlib import Path

from fleet_rlm.sandbox.roots import validate_workspace_id

GUEST_CONTEXT = "/context"
SESSIONS_DIR = "sessions"
SANDBOXES_DIR = "sandboxes"
REPOS_SUBDIR = "repos"
_keys = itertools.count()
_pruned: set[Path] = set()
_prune_lock = threading.Lock()


def session_context_dir(data_dir: Path, session_id: str) -> Path:
    """`<data_dir>/sessions/<session_id>/context` (not created)."""
    validate_workspace_id(session_id)  # same alphabet: one path component, no dots-only names
    return data_dir / SESSIONS_DIR / session_id / "context"


def ensure_session_context(data_dir: Path, session_id: str) -> Path:
    """Create a session's context directory: parents 0700 (host only), the directory itself 0755."""
    target = session_context_dir(data_dir, session_id)
    for path in (data_dir / SESSIONS_DIR, target.parent):
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    target.mkdir(mode=0o755, exist_ok=True)
    return target


def remove_session_context(data_dir: Path, session_id: str) -> bool:
    """Delete `<data_dir>/sessions/<session_id>/` (documents and clones) when the session is deleted.

    Host-only storage, so a plain tree removal is safe; `shutil.rmtree` uses descriptors and never follows a
    link it meets. Returns whether anything was there. Views of live sandboxes hold their own hard links and go
    with their sandbox.
    """
    validate_workspace_id(session_id)
    target = data_dir / SESSIONS_DIR / session_id
    if not target.exists():
        return False
    shutil.rmtree(target, ignore_errors=True)
    return True


def share_context(data_dir: Path, origin_id: str, target_id: str, names: list[str]) -> None:
    """Hard-link documents and clones (names relative to the context directory) of one session into another's
    (a fork's): the fork holds them without a second copy, and keeps them when the origin is deleted."""
    source = session_context_dir(data_dir, origin_id)
    target = ensure_session_context(data_dir, target_id)
    for name in names:
        origin, copy = source / name, target / name
        if ".." in Path(name).parts or copy.exists() or origin.is_symlink():
            continue
        if origin.is_dir():
            copy.parent.mkdir(mode=0o755, exist_ok=True)
            _link_tree(origin, copy)
        elif origin.is_file():
            _link_file(origin, copy)


class ContextView:
    """One sandbox's read-only window on one session's context directory."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        parent = data_dir / SANDBOXES_DIR
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _prune_leftovers(parent)
        self.path = parent / f"{_host_tag()}-{os.getpid()}-{next(_keys)}"
        shutil.rmtree(self.path, ignore_errors=True)  # a leftover of a crashed process with the same pid
        self.path.mkdir(mode=0o755)
        os.chmod(self.path, 0o755)  # whatever the umask: the sandbox uid must traverse it
        self.session_id: str | None = None
        self._lock = threading.Lock()

    def attach(self, session_id: str | None) -> None:
        """Show `session_id`'s context (once per sandbox; a different session is refused), then sync."""
        if session_id is None:
            return
        with self._lock:
            if self.session_id is not None and self.session_id != session_id:
                raise RuntimeError(f"this sandbox already serves session {self.session_id}")
            self.session_id = session_id
            self._sync()

    def _sync(self) -> None:
        assert self.session_id is not None
        source = session_context_dir(self.data_dir, self.session_id)
        for entry in _entries(source):
            if entry.name.startswith("."):
                continue  # in-progress writes
            if entry.name == REPOS_SUBDIR and entry.is_dir(follow_symlinks=False):
                (self.path / REPOS_SUBDIR).mkdir(mode=0o755, exist_ok=True)
                for repo in _entries(Path(entry.path)):
                    if not repo.name.startswith(".") and not (self.path / REPOS_SUBDIR / repo.name).exists():
                        _link_tree(Path(repo.path), self.path / REPOS_SUBDIR / repo.name)
            elif entry.is_file(follow_symlinks=False) and not (self.path / entry.name).exists():
                _link_file(Path(entry.path), self.path / entry.name)
        _drop_removed(self.path, source)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _drop_removed(view: Path, source: Path) -> None:
    """Documents and clones removed from the session since the last lease leave the view too."""
    for entry in _entries(view):
        if entry.name == REPOS_SUBDIR and entry.is_dir(follow_symlinks=False):
            for repo in _entries(Path(entry.path)):
                if not repo.name.startswith(".") and not (source / REPOS_SUBDIR / repo.name).exists():
                    shutil.rmtree(repo.path, ignore_errors=True)
        elif not entry.name.startswith(".") and not (source / entry.name).exists():
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                Path(entry.path).unlink(missing_ok=True)


def _host_tag() -> str:
    return "".join(c if c.isalnum() or c in "._" else "_" for c in socket.gethostname())[:64] or "host"


def _prune_leftovers(parent: Path) -> None:
    """Once per process: remove views left by crashed processes of this host (their pid no longer runs).
    Views of other hosts sharing the data dir carry another host tag and are left alone."""
    with _prune_lock:
        if parent in _pruned:
            return
        _pruned.add(parent)
    prefix = f"{_host_tag()}-"
    for entry in _entries(parent):
        pid = entry.name.removeprefix(prefix).split("-", 1)[0]
        if not entry.name.startswith(prefix) or not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
        except PermissionError:
            pass  # alive, another user's


def _entries(path: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            return sorted(it, key=lambda e: e.name)
    except FileNotFoundError:
        return []


def _link_file(source: Path, target: Path) -> None:
    tmp = target.with_name(f".tmp-{target.name}")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    try:
        os.link(source, tmp, follow_symlinks=False)
    except OSError:  # another file system (EXDEV) or no hard links: copy instead
        shutil.copy2(source, tmp, follow_symlinks=False)
    os.replace(tmp, target)


def _link_tree(source: Path, target: Path) -> None:
    """A finished clone as a tree of hard links, renamed into place when complete."""
    tmp = target.with_name(f".tmp-{target.name}")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp, symlinks=True, copy_function=_hardlink_or_copy)
    os.replace(tmp, target)


def _hardlink_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)
