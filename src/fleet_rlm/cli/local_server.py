"""Find, or start, the CLI's local server: one warm API process per data dir, reused by every CLI call.

Starting the app costs seconds (DSPy, LiteLLM, SQLAlchemy, migrations); a turn on a warm server costs
milliseconds. So `chat`, `run`, `sessions`, ... talk to a server started on first use, detached, bound to
127.0.0.1 on an ephemeral port, and found again through `local-server.json` in the data dir (mode 0600: port,
pid and a random token the server demands on every request, so other local users and web pages cannot drive it).

All decisions happen under an exclusive lock on `local-server.lock`, so CLIs started together share one server.
A file whose server does not answer with the same pid and token is stale and replaced; a server built from other
code or other settings (version, data dir, database, model...) is asked to stop and replaced. Each CLI holds a
shared lock on `local-server-<pid>.attach` while it uses the server; the server stops itself only when it can
lock that file alone, after `local_server_idle_s` without requests or running turns (see `local_serve.py`).
This module imports only the standard library and httpx: the CLI process never loads the model or web stack.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from fleet_rlm.errors import FleetError

if TYPE_CHECKING:
    from fleet_rlm.cli.settings_memo import CliSettings

DISCOVERY_FILE = "local-server.json"
LOCK_FILE = "local-server.lock"
LOG_FILE = "local-server.log"
TOKEN_HEADER = "X-Fleet-Local-Token"
IDENTITY_PATH = "/_local/identity"
SHUTDOWN_PATH = "/_local/shutdown"
STARTUP_TIMEOUT_S = 120.0
STOP_WAIT_S = 8.0

Notice = Callable[[str], None]


@dataclass
class LocalServer:
    """A verified local server: where it listens, the token it wants, and (once attached) our shared lock on it."""

    port: int
    pid: int
    token: str
    attached_fd: int | None = None

    def detach(self) -> None:
        if self.attached_fd is not None:
            os.close(self.attached_fd)
            self.attached_fd = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        return {TOKEN_HEADER: self.token}


def data_dir_ready(data_dir: Path) -> Path:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        (data_dir / "logs").mkdir(exist_ok=True)
    except OSError as exc:
        raise FleetError(
            f"cannot create the data dir {data_dir} ({exc.strerror or exc})",
            code="data_dir_unwritable",
            action="set FLEET_DATA_DIR to a writable directory",
        ) from exc
    return data_dir


@contextlib.contextmanager
def dir_lock(data_dir: Path, *, blocking: bool = True) -> Iterator[bool]:
    """The per-data-dir lock; yields False when `blocking` is off and someone else holds it."""
    fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def attach_path(data_dir: Path, pid: int) -> Path:
    """Every CLI using server `pid` holds a shared lock on this file; the server stops only when it gets it alone."""
    return data_dir / f"local-server-{pid}.attach"


def attach(data_dir: Path, server: LocalServer) -> bool:
    """Take our shared lock on the server; False when it is gone or already stopping (holds it exclusively)."""
    try:
        fd = os.open(attach_path(data_dir, server.pid), os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    server.attached_fd = fd
    return True


def read_discovery(data_dir: Path) -> dict[str, Any] | None:
    """The discovery file if it is a regular file of ours, private, and well formed; else None."""
    try:
        fd = os.open(data_dir / DISCOVERY_FILE, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            body = json.loads(handle.read(65536))
        fields_ok = isinstance(body, dict) and all(
            isinstance(body.get(name), kind) for name, kind in (("port", int), ("pid", int), ("token", str))
        )
        return body if fields_ok else None
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def write_discovery(data_dir: Path, body: dict[str, Any]) -> None:
    """Atomically (re)place the discovery file, created 0600 so the token never is readable by others."""
    tmp = data_dir / f".{DISCOVERY_FILE}.{os.getpid()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(body, handle)
    os.replace(tmp, data_dir / DISCOVERY_FILE)


def remove_discovery(data_dir: Path, *, pid: int | None = None) -> None:
    """Remove the discovery file (only when it still names `pid`, if given)."""
    if pid is not None:
        current = read_discovery(data_dir)
        if current is not None and current.get("pid") != pid:
            return
    with contextlib.suppress(FileNotFoundError):
        (data_dir / DISCOVERY_FILE).unlink()


def identity(server: LocalServer, *, timeout: float = 3.0) -> dict[str, Any] | None:
    """What the server on that port says it is, when it accepts our token; None when it does not answer so."""
    try:
        # plain http on loopback: verify=False only skips loading the CA bundle (~80 ms per client)
        response = httpx.get(server.base_url + IDENTITY_PATH, headers=server.headers, timeout=timeout, verify=False)
        if response.status_code != 200:
            return None
        body = response.json()
    except (httpx.HTTPError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_server(server: LocalServer, *, wait_s: float = STOP_WAIT_S) -> bool:
    """Ask a verified server to stop (it finishes in-flight requests briefly); True once its process is gone."""
    with contextlib.suppress(httpx.HTTPError):
        httpx.post(server.base_url + SHUTDOWN_PATH, headers=server.headers, timeout=3.0, verify=False)
    deadline = time.monotonic() + wait_s
    while pid_alive(server.pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def current(data_dir: Path) -> tuple[LocalServer, dict[str, Any]] | None:
    """The server the discovery file names and its identity, if it answers with that pid to our token."""
    body = read_discovery(data_dir)
    if body is None:
        return None
    server = LocalServer(port=body["port"], pid=body["pid"], token=body["token"])
    answer = identity(server)
    if answer is None or answer.get("pid") != server.pid:
        return None
    return server, answer


STARTING = "starting the local server (later commands reuse it)…"
REPLACING = "restarting the local server: the settings or the installed code changed…"


def ensure_local_server(settings: CliSettings, notice: Notice | None = None) -> LocalServer:
    """A running local server for these settings: the one found in the data dir, or a new one."""
    data_dir = data_dir_ready(settings.data_dir)
    wanted = settings.fingerprint
    with dir_lock(data_dir):
        found = current(data_dir)
        message = STARTING
        if found is not None:
            server, answer = found
            if answer.get("fingerprint") == wanted and attach(data_dir, server):
                return server
            if answer.get("fingerprint") != wanted:
                stop_server(server)  # other code or other settings: replace it
                message = REPLACING
        remove_discovery(data_dir)  # none, stale (crashed, or another process on that port) or replaced
        if notice is not None:
            notice(message)
        server = _spawn(data_dir)
        if not attach(data_dir, server):
            raise FleetError("the local server stopped right after starting", code="local_server_failed")
        return server


def _spawn(data_dir: Path) -> LocalServer:
    """Start `fleet_rlm.cli.local_serve` detached; it answers one JSON line on stdout: ready or error."""
    log_path = data_dir / "logs" / LOG_FILE
    with open(log_path, "ab") as log:
        child = subprocess.Popen(
            [sys.executable, "-m", "fleet_rlm.cli.local_serve"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,  # the terminal's Ctrl-C belongs to the CLI, not to the server
            close_fds=True,
        )
    assert child.stdout is not None
    line = _read_line(child, STARTUP_TIMEOUT_S)
    child.stdout.close()
    child.returncode = 0  # detached on purpose: no "still running" warning when this process exits
    try:
        message = json.loads(line) if line else {}
    except ValueError:
        message = {}
    if isinstance(message.get("error"), dict):
        error = message["error"]
        raise FleetError(
            str(error.get("message") or "the local server did not start"),
            code=str(error.get("code") or "local_server_failed"),
            action=error.get("action"),
        )
    ready = message.get("ready")
    if not isinstance(ready, dict):
        raise FleetError(f"the local server did not start (its log: {log_path})", code="local_server_failed")
    return LocalServer(port=int(ready["port"]), pid=int(ready["pid"]), token=str(ready["token"]))


def _read_line(child: subprocess.Popen[bytes], timeout: float) -> str:
    assert child.stdout is not None
    fd = child.stdout.fileno()
    deadline = time.monotonic() + timeout
    chunks = b""
    while b"\n" not in chunks:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        ready, _, _ = select.select([fd], [], [], min(remaining, 0.5))
        if not ready:
            if child.poll() is not None:
                break
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks += chunk
    return chunks.decode(errors="replace").split("\n", 1)[0]
