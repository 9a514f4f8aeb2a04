"""No guest process survives its cell: the worker ends every other process of its sandbox after each cell.

Standard library only; loaded by worker.py from its own directory (locally, under bubblewrap and in Daytona).
Two ways, chosen by the host (`--reap`):
- `pidns` (bubblewrap): the worker runs in its own PID namespace under its own uid (root host) or user
  namespace (ordinary host), so `kill(-1, SIGKILL)` reaches every other process of the sandbox and nothing
  else; no guest process can leave a PID namespace, whatever it does (fork, setsid, double fork).
- `tree` (reduced isolation, Daytona): the worker is a child subreaper, so an orphaned descendant (a
  double-forked daemon, a `setsid` child whose parent exited) is re-parented to the worker rather than to
  init, and the worker kills every descendant it finds in /proc. A process that no longer descends from
  the worker is out of reach: in reduced mode guest code runs as the server's user and can ask another
  process to start one (a shell via ssh, `at`, systemd-run, or a process it already controls). Guest
  *threads* inside the worker are not processes and keep running across cells.
"""

import _signal  # the C module, and try/except for suppress: see worker.py's imports
import os
import time

PR_SET_CHILD_SUBREAPER = 36
MAX_ROUNDS = 50


def become_subreaper():
    """Orphans of the guest are re-parented to this process (Linux >= 3.4); False when unavailable."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except Exception:
        return False


def _has_children():
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return False
    return True if pid == 0 else _has_children()  # reaped one: look again


def _parents():
    """pid -> parent pid of every process visible in /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
            parents[int(entry)] = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return parents


def _descendants(root):
    children = {}  # type: ignore[var-annotated]
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _kill_tree():
    me = os.getpid()
    for _ in range(MAX_ROUNDS):  # a process forking while we look is caught in the next round
        victims = _descendants(me)
        if not victims:
            return
        for pid in victims:
            try:
                os.kill(pid, _signal.SIGKILL)
            except OSError:
                pass
        _reap_ready()
        time.sleep(0.002)


def _kill_namespace():
    for _ in range(MAX_ROUNDS):
        try:
            os.kill(-1, _signal.SIGKILL)  # every process we may signal except ourselves and the namespace's init
        except OSError:
            return  # nobody left (zombies count until reaped: ours below, the others by bwrap's init)
        _reap_ready()
        time.sleep(0.002)


def _reap_ready():
    """Collect the children that already ended (zombies count against RLIMIT_NPROC and show in /proc)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def end_guest_processes(mode):
    """Kill every process of the sandbox except this one. Cheap when the cell started none."""
    if mode == "pidns":
        _kill_namespace()
    elif mode == "tree":
        if not _has_children():  # every descendant has a live ancestor among our children (or is one)
            return
        _kill_tree()
    _reap_ready()
