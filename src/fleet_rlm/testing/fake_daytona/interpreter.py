"""Code-interpreter contexts: one persistent Python process per context, so globals survive between runs.

The driver inside the sandbox reads one JSON request per line on stdin and answers on a private dup of its
original stdout with JSON lines: {"type": "stdout"|"stderr", "text"}, {"type": "error", "name", "value",
"traceback"} and finally {"type": "done"}. The user's fd 1 is pointed at stderr so raw writes cannot forge
protocol lines. Runs in one context are serialized, as in the real daemon; a timeout interrupts the run with
SIGINT (state survives) and the WebSocket is closed with code 4008, which the SDK turns into a timeout error.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from .fsmap import SandboxFS
from .models import new_id, now_iso
from .sessions import call_soon

DRIVER = r"""
import json, os, sys, traceback
_proto = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
os.dup2(2, 1)
def _send(msg):
    _proto.write(json.dumps(msg) + "\n")
    _proto.flush()
_send({"type": "ready", "pid": os.getpid()})
class _Stream:
    def __init__(self, kind):
        self.kind = kind
    def write(self, text):
        if text:
            _send({"type": self.kind, "text": text})
        return len(text)
    def flush(self):
        pass
    def isatty(self):
        return False
sys.stdout, sys.stderr = _Stream("stdout"), _Stream("stderr")
_globals = {"__name__": "__main__", "__builtins__": __builtins__}
for _line in sys.stdin:
    _req = json.loads(_line)
    os.environ.update(_req.get("envs") or {})
    try:
        exec(compile(_req["code"], "<cell>", "exec"), _globals)
    except BaseException as _exc:
        _send({"type": "error", "name": type(_exc).__name__, "value": str(_exc),
               "traceback": "".join(traceback.format_exception(_exc))})
    _send({"type": "done"})
"""

Emit = Callable[[dict[str, Any]], Awaitable[None]]


class InterpreterContext:
    """A persistent Python REPL process inside the sandbox."""

    def __init__(
        self,
        fs: SandboxFS,
        env: dict[str, str],
        cwd: str,
        loop: asyncio.AbstractEventLoop,
        context_id: str | None = None,
    ) -> None:
        self.id = context_id or new_id()
        self.cwd = cwd
        self.created_at = now_iso()
        self.lock = asyncio.Lock()
        self._loop = loop
        self._protocol: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._stderr: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._pid: int | None = None
        argv, host_cwd = fs.command(["python3", "-c", DRIVER], cwd)
        self.proc = subprocess.Popen(
            argv,
            cwd=host_cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        threading.Thread(target=self._read_protocol, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    @property
    def active(self) -> bool:
        return self.proc.poll() is None

    def to_dto(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "cwd": self.cwd,
            "createdAt": self.created_at,
            "active": self.active,
            "language": "python",
        }

    def _read_protocol(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if message.get("type") == "ready":
                self._pid = int(message["pid"])
                continue
            call_soon(self._loop, self._protocol.put_nowait, message)
        call_soon(self._loop, self._protocol.put_nowait, None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        while chunk := os.read(fd, 65536):
            call_soon(self._loop, self._stderr.put_nowait, chunk)
        call_soon(self._loop, self._stderr.put_nowait, None)

    async def run(self, code: str, envs: dict[str, str] | None, timeout: float | None, emit: Emit) -> bool:
        """Run one cell, forwarding output through `emit`; False when it timed out."""
        async with self.lock:
            while not self._stderr.empty():
                self._stderr.get_nowait()
            failed = False

            async def safe_emit(message: dict[str, Any]) -> None:
                nonlocal failed
                if not failed:
                    try:
                        await emit(message)
                    except Exception:
                        failed = True  # client went away: keep draining so the next run starts clean

            request = json.dumps({"code": code, "envs": envs or {}}) + "\n"
            await asyncio.to_thread(self._write, request.encode("utf-8"))
            stderr_task = asyncio.create_task(self._forward_stderr(safe_emit))
            try:
                if timeout:
                    return await asyncio.wait_for(self._forward_protocol(safe_emit), timeout)
                return await self._forward_protocol(safe_emit)
            except TimeoutError:
                self.interrupt()
                await self._forward_protocol(_discard)
                return False
            finally:
                stderr_task.cancel()

    def _write(self, payload: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(payload)
        self.proc.stdin.flush()

    async def _forward_protocol(self, emit: Emit) -> bool:
        while True:
            message = await self._protocol.get()
            if message is None:
                self._protocol.put_nowait(None)
                await emit({"type": "error", "name": "ContextDied", "value": "interpreter exited", "traceback": ""})
                return True
            if message.get("type") == "done":
                return True
            await emit(message)

    async def _forward_stderr(self, emit: Emit) -> None:
        """Raw fd-level writes (including user fd 1) surface as stderr text while a run is active."""
        while (chunk := await self._stderr.get()) is not None:
            await emit({"type": "stderr", "text": chunk.decode("utf-8", "replace")})

    def interrupt(self) -> None:
        """SIGINT to the Python process only (not its bwrap parent), so globals survive."""
        if self.active and self._pid is not None:
            try:
                os.kill(self._pid, signal.SIGINT)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        if self.active:
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


async def _discard(_message: dict[str, Any]) -> None:
    return None
