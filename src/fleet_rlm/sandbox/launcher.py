"""Starts one local worker: bubblewrap argv (or a reduced-isolation subprocess), limits, pipes, privileges.

Why it looks like this:
- The worker applies rlimits itself (`--limits`, soft = hard) before any guest code runs, so no `preexec_fn`
  (unsafe with the pool's threads) is needed and the Daytona backend reuses the same switch.
- RLIMIT_NPROC never applies to uid 0. When the host runs as root, bubblewrap keeps CAP_SETUID/CAP_SETGID only
  long enough for the worker to switch to a per-sandbox uid (then every capability is gone), so the process
  limit contains fork bombs. As an ordinary user, the limit is the uid's current task count plus the budget.
- Only what Python needs is bound read-only; the workspace is bound at /workspace; the sandbox's own context
  view (`context_view.ContextView`: hard links to the one session it serves) read-only at /context; no host
  /tmp, /home, /root, data dir or /proc. The network namespace has loopback only.
- After every cell the worker kills every other process of the sandbox (`worker_procs`): `--reap pidns`
  under bubblewrap (a PID namespace nothing can leave), `--reap tree` without (descendants, as a subreaper).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleet_rlm.errors import Unavailable
from fleet_rlm.sandbox.context_view import GUEST_CONTEXT, ContextView
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.roots import GUEST_ROOT, SANDBOX_GID, WorkspaceRoots, ensure_roots
from fleet_rlm.sandbox.status import IsolationLevel, bwrap_path, sandbox_status
from fleet_rlm.sandbox.transport import PipeTransport
from fleet_rlm.sandbox.worker_code import GUEST_CODE_DIR, boot_args, compiled_worker

SANDBOX_UID_BASE = 1_500_000_000
_uid_counter = itertools.count()
PYTHON_FLAGS = ("-I", "-B", "-S")
"""Isolated, no bytecode writes, and no site.py: its .pth files are code nobody asked to run in a sandbox, and
a machine's (a CA-bundle hook importing certifi, say) cost a third of each cold start. The worker puts the
interpreter's site-packages on sys.path itself, so guest code still imports what is installed."""

WORKER_ENV = {"MALLOC_ARENA_MAX": "2"}
"""glibc reserves a 64 MiB arena per thread (up to 8 per core), which counts against the address-space limit:
without a cap, ~50 guest threads (e.g. concurrent llm_query calls) exhaust 1 GiB and threads fail to start."""


class IsolationUnavailable(Unavailable):
    code = "sandbox_isolation_unavailable"


def resolve_isolation(options: SandboxOptions) -> IsolationLevel:
    """The isolation a new sandbox gets; refuses when bubblewrap is required but unusable."""
    wanted = options.isolation
    available = bwrap_path() is not None
    if wanted == "reduced" and not options.require_isolation:
        return "reduced"
    if available and wanted != "reduced":
        return "bubblewrap"
    if options.require_isolation or wanted == "bubblewrap":
        raise IsolationUnavailable(
            f"sandbox isolation is required but unavailable: {sandbox_status()['reason']}",
            action="install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) "
            "or set FLEET_SANDBOX_REQUIRE_ISOLATION=false to accept reduced isolation",
        )
    return "reduced"


def python_executable() -> str:
    """The base interpreter (a venv's python is a symlink to it); the worker needs only the stdlib."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def _uid_task_count(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if entry.stat().st_uid == uid:
                count += len(os.listdir(f"/proc/{entry.name}/task"))
    return count


def _limits(options: SandboxOptions, nproc: int | None) -> str:
    parts = {
        "as": options.memory_mb * 1024 * 1024,
        "cpu": options.cpu_seconds,
        "fsize": options.max_file_mb * 1024 * 1024,
        "nofile": 1024,
        "core": 0,
    }
    if nproc is not None:
        parts["nproc"] = nproc
    return ",".join(f"{k}={v}" for k, v in parts.items())


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    for name in ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives"):
        args += ["--ro-bind-try", name, name]
    prefix = os.path.realpath(sys.base_prefix)
    exe_dir = os.path.dirname(python_executable())
    for path in (prefix, exe_dir):
        if path.startswith("/usr/") or (path == exe_dir and exe_dir.startswith(prefix + "/")):
            continue
        args += [*_traversable_parents(path), "--ro-bind", path, path]
    return args


def _traversable_parents(path: str) -> list[str]:
    """bwrap creates missing parents with mode 0700; the unprivileged worker must be able to traverse them."""
    args: list[str] = []
    parts = Path(path).parts[1:-1]
    for depth in range(1, len(parts) + 1):
        args += ["--perms", "0755", "--dir", "/" + "/".join(parts[:depth])]
    return args


def bwrap_argv(
    bwrap: str,
    options: SandboxOptions,
    roots: WorkspaceRoots,
    worker_args: list[str],
    *,
    as_root: bool,
    context_view: Path | None = None,
) -> list[str]:
    if as_root:
        # Root: no user namespace (it would keep kuid 0); keep only the caps the worker needs to drop its uid.
        ns = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
        caps = ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        ns, caps = ["--unshare-all"], ["--cap-drop", "ALL"]
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": GUEST_ROOT,
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "WORKSPACE_ROOT": GUEST_ROOT,
        **WORKER_ENV,
    }
    argv = [bwrap, *ns, "--die-with-parent", "--new-session", *caps, "--hostname", "sandbox", "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    argv += _system_binds()
    code = compiled_worker(options.data_dir)
    argv += [*_traversable_parents(GUEST_CODE_DIR), "--ro-bind", str(code), GUEST_CODE_DIR]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--perms", "1777", "--size", str(options.tmp_mb * 1024 * 1024), "--tmpfs", "/tmp"]
    argv += ["--bind", str(roots.host_root), GUEST_ROOT]
    if context_view is not None:
        argv += ["--ro-bind", str(context_view), GUEST_CONTEXT]
    argv += ["--chdir", GUEST_ROOT]
    return [*argv, python_executable(), *PYTHON_FLAGS, *boot_args(GUEST_CODE_DIR), *worker_args]


class _Spawner:
    """Starts every worker from one long-lived thread.

    `--die-with-parent` uses PR_SET_PDEATHSIG, which fires when the *thread* that forked bwrap exits, not the
    process. Workers started from pool threads or request threads would die with them, so all forks happen on
    this daemon thread, which lives as long as the host process.
    """

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _loop(self) -> None:
        while True:
            job, future = self._jobs.get()
            try:
                future.set_result(job())
            except BaseException as exc:
                future.set_exception(exc)

    def popen(self, argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="sandbox-spawner", daemon=True)
                self._thread.start()
        future: Future[subprocess.Popen[bytes]] = Future()
        self._jobs.put((lambda: subprocess.Popen(argv, **kwargs), future))
        return future.result()


_spawner = _Spawner()


@dataclass
class LocalWorker:
    """A running worker subprocess and its transport. `kill()` takes down everything it started."""

    process: subprocess.Popen[bytes]
    transport: PipeTransport
    isolation: IsolationLevel
    guest_root: str
    roots: WorkspaceRoots
    context: ContextView | None = None

    def alive(self) -> bool:
        return self.process.poll() is None

    def attach_context(self, session_id: str | None) -> None:
        """Show `session_id`'s context documents (read-only) to this sandbox; see `context_view`."""
        if self.context is not None:
            self.context.attach(session_id)

    def kill(self) -> None:
        # bwrap: --die-with-parent takes the PID namespace down with the outer bwrap; reduced: the session.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        self.transport.close()
        if self.context is not None:
            self.context.remove()


def prepare_roots(
    workspaces_dir: Path, workspace_id: str, *, isolation: IsolationLevel | None = None
) -> WorkspaceRoots:
    """Create a workspace's roots owned as this host's workers need them (idempotent).

    The group and modes are decided in one place, `roots.ensure_roots` (the API creates roots too); `isolation`
    does not change them: a root worker without bubblewrap ignores the group.
    """
    del isolation
    return ensure_roots(workspaces_dir, workspace_id)


def spawn_worker(options: SandboxOptions, workspace_id: str | None = None) -> LocalWorker:
    """Start a worker for one workspace. Returns before the worker is ready (see `session.WorkerSession`)."""
    isolation = resolve_isolation(options)
    as_root = os.geteuid() == 0
    drop_uid = isolation == "bubblewrap" and as_root
    roots = prepare_roots(options.workspaces_dir, workspace_id or options.workspace_id, isolation=isolation)
    to_worker_r, to_worker_w = os.pipe()
    from_worker_r, from_worker_w = os.pipe()
    worker_args = ["--in", str(to_worker_r), "--out", str(from_worker_w)]
    nproc: int | None = None
    if drop_uid:
        uid = SANDBOX_UID_BASE + (os.getpid() % 100_000) * 1000 + next(_uid_counter) % 1000
        worker_args += ["--uid", str(uid), "--gid", str(SANDBOX_GID)]
        nproc = options.max_processes
    elif not as_root:
        nproc = _uid_task_count(os.getuid()) + options.max_processes
    guest_root = GUEST_ROOT if isolation == "bubblewrap" else str(roots.host_root)
    view = ContextView(options.data_dir)
    try:  # whatever fails from here (building the worker's code, the spawn) takes the view and pipes with it
        guest_context = GUEST_CONTEXT if isolation == "bubblewrap" else str(view.path)
        worker_args += ["--workspace", guest_root, "--limits", _limits(options, nproc), "--context", guest_context]
        worker_args += ["--reap", "pidns" if isolation == "bubblewrap" else "tree"]
        if isolation == "bubblewrap":
            bwrap = bwrap_path()
            assert bwrap is not None
            argv = bwrap_argv(bwrap, options, roots, worker_args, as_root=as_root, context_view=view.path)
            env, cwd = None, None
        else:
            code = str(compiled_worker(options.data_dir))
            argv = [python_executable(), *PYTHON_FLAGS, *boot_args(code), *worker_args]
            env = {
                "PATH": "/usr/local/bin:/usr/bin:/bin",
                "LANG": "C.UTF-8",
                "WORKSPACE_ROOT": guest_root,
                **WORKER_ENV,
            }
            cwd = str(roots.host_root)
        process = _spawner.popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(to_worker_r, from_worker_w),
            env=env if env is not None else {},
            cwd=cwd,
            start_new_session=True,
        )
    except BaseException:
        view.remove()
        os.close(from_worker_r)
        os.close(to_worker_w)
        raise
    finally:
        os.close(to_worker_r)
        os.close(from_worker_w)
    transport = PipeTransport(from_worker_r, to_worker_w)
    return LocalWorker(process, transport, isolation, guest_root, roots, view)
