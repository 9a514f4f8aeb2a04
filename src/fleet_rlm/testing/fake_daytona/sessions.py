"""Process sessions as the Daytona daemon runs them: one persistent bash per session, commands run in order.

Like the real daemon, each command runs in the session's shell (so `cd`/`export` persist and a long-running
command blocks later commands of the same session) with stdin, stdout and stderr connected to per-command
FIFOs. Output is logged line by line with the daemon's stream prefixes (0x01*3 stdout, 0x02*3 stderr), a
trailing partial line is flushed at EOF, and input sent to a running command is echoed into the log as stdout
unless the command was started with `suppressInputEcho`. Reader threads feed live listeners (WebSocket log
followers) through the server's event loop.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .errors import daemon_error
from .fsmap import HOME, SandboxFS

STDOUT_PREFIX = b"\x01\x01\x01"
STDERR_PREFIX = b"\x02\x02\x02"


def call_soon(loop: asyncio.AbstractEventLoop, fn: Callable[..., object], *args: object) -> None:
    """Hand work to the server loop from a reader thread; after shutdown there is nobody left to tell."""
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:
        pass


class CommandLog:
    """The prefixed log of one command, with listeners that receive each new chunk (None = end)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._listeners: list[asyncio.Queue[bytes | None]] = []
        self.data = bytearray()
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.closed = False

    def append(self, prefix: bytes, payload: bytes) -> None:
        chunk = prefix + payload
        with self._lock:
            self.data += chunk
            (self.stdout if prefix == STDOUT_PREFIX else self.stderr).extend(payload)
            for queue in self._listeners:
                call_soon(self._loop, queue.put_nowait, chunk)

    def close(self) -> None:
        with self._lock:
            self.closed = True
            for queue in self._listeners:
                call_soon(self._loop, queue.put_nowait, None)
            self._listeners.clear()

    def subscribe(self) -> tuple[bytes, asyncio.Queue[bytes | None]]:
        """Snapshot of the log so far plus a queue of what follows (call on the event loop)."""
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        with self._lock:
            snapshot = bytes(self.data)
            if self.closed:
                queue.put_nowait(None)
            else:
                self._listeners.append(queue)
        return snapshot, queue

    def unsubscribe(self, queue: asyncio.Queue[bytes | None]) -> None:
        with self._lock:
            if queue in self._listeners:
                self._listeners.remove(queue)

    def combined(self) -> str:
        with self._lock:
            raw = bytes(self.data)
        return raw.replace(STDOUT_PREFIX, b"").replace(STDERR_PREFIX, b"").decode("utf-8", "replace")


class SessionCommand:
    """One command of a session: its log, exit code and (while running) the write end of its stdin FIFO."""

    def __init__(self, command_id: str, command: str, suppress_echo: bool, loop: asyncio.AbstractEventLoop):
        self.id = command_id
        self.command = command
        self.suppress_echo = suppress_echo
        self.exit_code: int | None = None
        self.log = CommandLog(loop)
        self.done = asyncio.Event()
        self.input_fd: int | None = None
        self.input_lock = asyncio.Lock()

    def to_dto(self) -> dict[str, object]:
        return {"id": self.id, "command": self.command, "exitCode": self.exit_code}


def _pump(path: Path, prefix: bytes, log: CommandLog) -> None:
    """Copy a FIFO into the log, one prefixed line at a time, flushing a trailing partial line at EOF."""
    pending = b""
    with open(path, "rb", buffering=0) as fifo:
        while chunk := fifo.read(65536):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                log.append(prefix, line + b"\n")
    if pending:
        log.append(prefix, pending + b"\n")


class ShellSession:
    """A persistent bash inside the sandbox that runs the session's commands one after another."""

    def __init__(self, session_id: str, fs: SandboxFS, env: dict[str, str], loop: asyncio.AbstractEventLoop):
        self.id = session_id
        self.fs = fs
        self.loop = loop
        self.commands: dict[str, SessionCommand] = {}
        self.dir = fs.root / "tmp" / ".fake-daytona" / "sessions" / session_id
        self.dir.mkdir(parents=True, exist_ok=True)
        argv, cwd = fs.command(["bash", "--noprofile", "--norc", "-s"], HOME)
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def to_dto(self) -> dict[str, object]:
        return {"sessionId": self.id, "commands": [c.to_dto() for c in self.commands.values()]}

    def execute(self, command_id: str, command: str, suppress_echo: bool) -> SessionCommand:
        if command_id in self.commands:
            raise daemon_error(409, "command with the given ID already exists")
        if self.proc.poll() is not None or self.proc.stdin is None:
            raise daemon_error(410, "session process has exited", "SESSION_ENDED")
        cmd = SessionCommand(command_id, command, suppress_echo, self.loop)
        self.commands[command_id] = cmd
        cdir = self.dir / command_id
        cdir.mkdir(parents=True)
        paths = {name: cdir / name for name in ("stdin", "stdout", "stderr", "exit_code", "script.sh")}
        for name in ("stdin", "stdout", "stderr"):
            os.mkfifo(paths[name])
        paths["script.sh"].write_text(self.fs.rewrite(command) + "\n", encoding="utf-8")
        cmd.input_fd = os.open(paths["stdin"], os.O_RDWR | os.O_NONBLOCK)
        readers = [
            threading.Thread(target=_pump, args=(paths["stdout"], STDOUT_PREFIX, cmd.log), daemon=True),
            threading.Thread(target=_pump, args=(paths["stderr"], STDERR_PREFIX, cmd.log), daemon=True),
        ]
        for reader in readers:
            reader.start()
        guest = {name: shlex.quote(self.fs.to_guest(path)) for name, path in paths.items()}
        wrapper = (
            f"{{ . {guest['script.sh']}\n}} < {guest['stdin']} > {guest['stdout']} 2> {guest['stderr']}\n"
            f"echo $? > {guest['exit_code']}\n"
        )
        self.proc.stdin.write(wrapper.encode("utf-8"))
        self.proc.stdin.flush()
        threading.Thread(target=self._watch, args=(cmd, paths, readers), daemon=True).start()
        return cmd

    def _watch(self, cmd: SessionCommand, paths: dict[str, Path], readers: list[threading.Thread]) -> None:
        delay = 0.001
        while True:
            text = paths["exit_code"].read_text() if paths["exit_code"].exists() else ""
            if text.endswith("\n"):
                cmd.exit_code = int(text.strip() or "1")
                break
            if self.proc.poll() is not None:
                cmd.exit_code = -1
                self._unblock_readers(paths)
                break
            time.sleep(delay)
            delay = min(delay * 1.5, 0.05)
        for reader in readers:
            reader.join()
        fd, cmd.input_fd = cmd.input_fd, None
        if fd is not None:
            os.close(fd)
        cmd.log.close()
        call_soon(self.loop, cmd.done.set)

    @staticmethod
    def _unblock_readers(paths: dict[str, Path]) -> None:
        """A reader still waiting to open its FIFO would hang forever once the shell is gone."""
        for name in ("stdout", "stderr"):
            try:
                os.close(os.open(paths[name], os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass

    async def send_input(self, cmd: SessionCommand, data: str) -> None:
        if cmd.exit_code is not None or cmd.input_fd is None:
            raise daemon_error(
                410,
                f"command has already completed with exit code {cmd.exit_code}",
                "COMMAND_ALREADY_COMPLETED",
            )
        if not data.endswith("\n"):
            data += "\n"
        payload = data.encode("utf-8")
        async with cmd.input_lock:
            fd = cmd.input_fd
            if fd is None:
                raise daemon_error(410, "command has already completed", "COMMAND_ALREADY_COMPLETED")
            if not cmd.suppress_echo:  # echoed first so the log order is deterministic
                cmd.log.append(STDOUT_PREFIX, payload)
            view = memoryview(payload)
            while view:  # non-blocking fd: a full pipe (command not reading) must not stall the event loop
                try:
                    view = view[os.write(fd, view) :]
                except BlockingIOError:
                    await asyncio.sleep(0.005)
                except OSError as exc:  # the command ended (and its stdin closed) while we waited
                    raise daemon_error(410, "command has already completed", "COMMAND_ALREADY_COMPLETED") from exc

    def close(self) -> None:
        """Kill the shell and everything it started (its process group)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
