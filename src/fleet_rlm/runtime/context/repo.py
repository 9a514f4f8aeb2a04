"""Shallow-clone a repository into the session's context (`<context_dir>/repos/<name>-<hash>/`), bounded.

The context directory is host-only (the sandbox sees it read-only at /context/repos/), so a clone can never be
changed by guest code between turns, and other sessions never see it.

Only https:// (public hosts, checked like URL sources) and file:// (only with url_allow_private: it reads the
server's own disk) are accepted. git runs with no system/global config, no credential helper, no prompts,
symlinks checked out as plain files (a link can never point out of the workspace) and only the one protocol
allowed. An https host is pinned to the addresses the guard checked (`http.curloptResolve`, git >= 2.37), so
git never resolves the name again (a DNS answer rebound to loopback is never used). The clone lands in a
temporary directory and is renamed into place when complete, so an existing directory is always a finished
clone and is reused for the same url + ref.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context.documents import safe_name
from fleet_rlm.runtime.context.failures import REPO_BLOCKED, REPO_FAILED, TOO_LARGE, cancelled, context_error
from fleet_rlm.runtime.context.netguard import REPO_CODES, check_url
from fleet_rlm.runtime.contracts import CancelToken
from fleet_rlm.sandbox.context_view import REPOS_SUBDIR as REPOS_DIR

_REF = re.compile(r"^[A-Za-z0-9._/][A-Za-z0-9._/+@-]{0,199}$")
_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_USERINFO = re.compile(r"(https?://)[^/@\s]+@")
_POLL_S = 0.2
_SIZE_EVERY_S = 1.0


@dataclass(frozen=True)
class ClonedRepo:
    url: str
    ref: str | None
    path: str  # relative to the context directory
    commit: str
    reused: bool
    size_bytes: int


def clone_repo(
    url: str,
    ref: str | None,
    *,
    context_dir: Path,
    allow_private: bool,
    timeout_s: float,
    max_bytes: int,
    cancel: CancelToken | None = None,
) -> ClonedRepo:
    """Clone (or reuse) `url` at `ref` (branch, tag or full commit sha; default branch when None)."""
    scheme, pinned = _check_repo_url(url, allow_private=allow_private)
    if ref is not None and (not _REF.match(ref) or ".." in ref):
        raise context_error(REPO_FAILED, f"invalid git ref {ref!r}", "give a branch, tag or full commit sha")
    key = hashlib.sha256(f"{url}\n{ref or ''}".encode()).hexdigest()[:12]
    name = safe_name(url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git"), default="repo", max_len=40)
    relative = f"{REPOS_DIR}/{name}-{key}"
    dest = context_dir / relative
    env = _git_env(scheme)
    if (dest / ".git").is_dir():
        return ClonedRepo(url, ref, relative, _head(dest, env), True, _du(dest))
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".tmp-{key}-"))
    try:
        deadline = time.monotonic() + timeout_s
        for command in _clone_commands(url, ref, tmp, scheme, allow_private=allow_private, resolve=pinned):
            _run(
                command,
                url=url,
                env=env,
                deadline=deadline,
                timeout_s=timeout_s,
                cancel=cancel,
                watch=tmp,
                max_bytes=max_bytes,
            )
        size = _du(tmp)
        if size > max_bytes:
            raise _too_large(url, max_bytes)
        commit = _head(tmp, env)
        try:
            tmp.rename(dest)
        except OSError:  # another turn finished the same clone first
            if not (dest / ".git").is_dir():
                raise
            return ClonedRepo(url, ref, relative, _head(dest, env), True, _du(dest))
        return ClonedRepo(url, ref, relative, commit, False, size)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _check_repo_url(url: str, *, allow_private: bool) -> tuple[str, str | None]:
    """The scheme and, for https, git's `http.curloptResolve` entry pinning the host to the checked addresses."""
    if url.startswith("https://"):
        target = check_url(url, allow_private=allow_private, codes=REPO_CODES)
        if _literal(target.host):
            return "https", None
        addresses = ",".join(f"[{a}]" if ":" in a else a for a in target.addresses)
        return "https", f"{target.host}:{target.port}:{addresses}"
    if url.startswith("file://") and allow_private:
        return "file", None
    raise context_error(
        REPO_BLOCKED,
        f"repository URL {redact(url)[:200]!r} is not allowed",
        "give an https:// URL of a public repository (ssh, git://, ext:: and local paths are refused)",
        status=403,
    )


def _literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _clone_commands(
    url: str, ref: str | None, tmp: Path, scheme: str, *, allow_private: bool, resolve: str | None = None
) -> list[list[str]]:
    config = [
        "-c", "credential.helper=",
        "-c", "core.symlinks=false",
        "-c", "core.hooksPath=/dev/null",
        "-c", "protocol.allow=never",
        "-c", f"protocol.{scheme}.allow=always",
        "-c", f"http.followRedirects={'true' if allow_private else 'false'}",
    ]  # fmt: skip
    if resolve is not None:  # curl connects to the checked addresses, never resolving the name again
        config += ["-c", f"http.curloptResolve={resolve}"]
    git = ["git", *config]
    if ref is not None and _SHA.match(ref):
        return [
            [*git, "init", "-q", str(tmp)],
            [*git, "-C", str(tmp), "remote", "add", "origin", "--", url],
            [*git, "-C", str(tmp), "fetch", "-q", "--depth", "1", "--no-tags", "origin", ref],
            [*git, "-C", str(tmp), "checkout", "-q", "FETCH_HEAD"],
        ]
    branch = ["--branch", ref] if ref is not None else []
    return [[*git, "clone", "-q", "--depth", "1", "--single-branch", "--no-tags", *branch, "--", url, str(tmp)]]


def _git_env(scheme: str) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "HOME": tempfile.gettempdir(),
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ALLOW_PROTOCOL": scheme,
        "GIT_LFS_SKIP_SMUDGE": "1",
        "GIT_ASKPASS": "/bin/false",
        "SSH_ASKPASS": "/bin/false",
    }
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _run(
    command: list[str],
    *,
    url: str,
    env: dict[str, str],
    deadline: float,
    timeout_s: float,
    cancel: CancelToken | None,
    watch: Path,
    max_bytes: int,
) -> None:
    """Run one git command in its own process group; kill it on timeout, cancel or when `watch` grows too big."""
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, env=env,
            start_new_session=True,
        )  # fmt: skip
        next_size_check = time.monotonic() + _SIZE_EVERY_S
        try:
            while True:
                try:
                    process.wait(timeout=_POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    pass
                now = time.monotonic()
                if cancel is not None and cancel.cancelled:
                    raise cancelled("repository clone")
                if now > deadline:
                    raise context_error(
                        REPO_FAILED,
                        f"cloning {redact(url)} took longer than {timeout_s:g} s",
                        "try a smaller repository or a specific ref",
                        status=504,
                    )
                if now >= next_size_check:
                    next_size_check = now + _SIZE_EVERY_S
                    if _du(watch) > max_bytes:
                        raise _too_large(url, max_bytes)
        except BaseException:
            _kill_group(process)
            raise
        if process.returncode != 0:
            stderr.seek(0)
            lines = [line for line in stderr.read().decode("utf-8", "replace").splitlines() if line.strip()]
            detail = redact(lines[-1].strip() if lines else f"exit status {process.returncode}")
            raise context_error(
                REPO_FAILED,
                f"git failed: {detail[:300]}",
                "check the repository URL and ref (private repositories are not supported)",
                status=502,
            )


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _head(repo: Path, env: dict[str, str]) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, env=env, timeout=30, check=False
    )
    if result.returncode != 0:
        raise context_error(
            REPO_FAILED, f"cloned repository has no commit: {result.stderr.strip()[:200]}", "check the ref"
        )
    return result.stdout.strip()


def _du(root: Path) -> int:
    total = 0
    for current, _dirs, files in os.walk(root, followlinks=False):
        for name in files:
            try:
                total += os.lstat(os.path.join(current, name)).st_size
            except OSError:
                pass
    return total


def _too_large(url: str, max_bytes: int) -> FleetError:
    return context_error(
        TOO_LARGE,
        f"repository {redact(url)} is larger than {max_bytes} bytes",
        "load a smaller repository, or only the files you need",
        status=413,
        what="repo",
        max_bytes=max_bytes,
    )


def redact(text: str) -> str:
    """Drop `user:token@` from URLs before they reach a message."""
    return _USERINFO.sub(r"\1", text)
