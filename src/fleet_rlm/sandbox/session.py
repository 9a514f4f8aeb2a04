"""Host-side client of one worker: readiness, one cell at a time, the timeout ladder, death detection.

Transport-agnostic apart from `spawn`: a Daytona backend provides another `spawn` returning an object with
`transport`, `alive()`, `kill()`, `exit_description()`, `guest_root` and `isolation`. The session owns the
context cache because the cache describes what *this* worker holds.
"""

from __future__ import annotations

import itertools
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

from fleet_rlm.sandbox.context_cache import ContextCache
from fleet_rlm.sandbox.frame_limits import DEFAULT_LIMITS, MIB, FrameLimits
from fleet_rlm.sandbox.launcher import spawn_worker
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.protocol import Body, Frame, FrameError
from fleet_rlm.sandbox.transport import Transport, TransportClosed


class WorkerLost(Exception):
    """The worker died or broke the protocol; its state is gone. `reason` is one line for the model."""

    def __init__(self, reason: str, output: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.output = output


class WorkerHandle(Protocol):
    @property
    def transport(self) -> Transport: ...

    @property
    def guest_root(self) -> str: ...

    @property
    def isolation(self) -> str: ...

    def alive(self) -> bool: ...

    def kill(self) -> None: ...


Spawn = Callable[[SandboxOptions, str | None], WorkerHandle]


@dataclass
class CellResult:
    kind: str  # ok | final | error | syntax | interrupted
    output: str
    omitted: int
    header: dict[str, Any]


def describe_exit(handle: WorkerHandle) -> str:
    process = getattr(handle, "process", None)
    code = None
    if process is not None:  # the channel closes a moment before the process is reaped
        try:
            code = process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
    if code is None:
        return "the sandbox process stopped responding"
    if code > 128 and handle.isolation == "bubblewrap":
        code = 128 - code  # bwrap reports a child killed by signal N as exit status 128 + N
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        hint = {"SIGXCPU": " (CPU-time limit reached)", "SIGKILL": " (killed, e.g. out of memory)"}.get(name, "")
        return f"the sandbox process was terminated by {name}{hint}"
    return f"the sandbox process exited with status {code}"


class _CellBudget:
    """What one cell's frames may add up to (`FrameLimits.cell_frames`, `cell_decoded`)."""

    def __init__(self, limits: FrameLimits) -> None:
        self.limits = limits
        self.frames = 0
        self.decoded = 0

    def spend(self, frame: Frame) -> str:
        """Count `frame`; the reason when the cell is over budget, else ''."""
        self.frames += 1
        self.decoded += frame.cost
        if self.frames > self.limits.cell_frames:
            return f"more than {self.limits.cell_frames} frames in one cell"
        if self.decoded > self.limits.cell_decoded:
            return f"more than {self.limits.cell_decoded // MIB} MiB of frames in one cell"
        return ""


class WorkerSession:
    """One live worker. Not thread-safe for cells: one `run_cell` at a time (the interpreter serializes)."""

    def __init__(
        self,
        options: SandboxOptions,
        workspace_id: str,
        spawn: Spawn = spawn_worker,
        limits: FrameLimits = DEFAULT_LIMITS,
    ) -> None:
        self.options = options
        self.limits = limits
        self.workspace_id = workspace_id
        self.handle: WorkerHandle = spawn(options, workspace_id)
        self.cache = ContextCache(options.inline_max_bytes)
        self.started_at = time.monotonic()
        self.ready_info: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._send_lock = threading.Lock()
        self._dead = False

    @property
    def guest_root(self) -> str:
        return self.handle.guest_root

    @property
    def isolation(self) -> str:
        return self.handle.isolation

    def alive(self) -> bool:
        return not self._dead and self.handle.alive()

    def attach_context(self, session_id: str | None) -> None:
        """Let this sandbox see `session_id`'s context documents read-only (and only that session's).

        Called at every lease: the first call binds the sandbox to the session, later calls add documents
        loaded since. Handles without the notion (test doubles) are left alone."""
        attach = getattr(self.handle, "attach_context", None)
        if attach is not None and session_id is not None:
            attach(session_id)

    def wait_ready(self) -> None:
        try:
            frame = self.handle.transport.recv_frame(timeout=self.options.startup_timeout_s)
        except (TimeoutError, TransportClosed, FrameError) as exc:
            self.close()
            raise WorkerLost(f"the sandbox failed to start: {exc}") from exc
        frame.done()
        if frame.kind != "ready":
            self.close()
            raise WorkerLost(f"the sandbox sent {frame.kind!r} instead of 'ready'")
        self.ready_info = frame.header

    def send(self, header: dict[str, Any], body: bytes | Body = b"") -> None:
        self.handle.transport.send_frame(header, body)

    def run_cell(
        self,
        code: str,
        variables: dict[str, Any],
        *,
        tools: list[str],
        output_fields: list[dict[str, Any]] | None,
        on_call: Callable[[Frame], None],
        timeout_s: float | None = None,
        want_value: bool = True,
        want_globals: bool = False,
        state: str | None = None,
        restore: dict[str, str] | None = None,
    ) -> CellResult:
        if self._dead:
            raise WorkerLost("the sandbox was already lost")
        cell_id = next(self._ids)
        fields, body = self.cache.diff(variables)
        header = {
            "t": "exec",
            "id": cell_id,
            "code": code,
            "tools": tools,
            "outputs": output_fields,
            "output_limit": self.options.output_max_chars,
            "value": want_value,  # whether the worker sends the last expression's JSON value (see worker.py)
            "globals": want_globals,  # whether it reports the REPL's user-visible globals (worker_globals.py)
            "state": state,  # "full" | "delta": the REPL's variables as data after the cell (worker_state.py)
            **({"restore": restore} if restore else {}),  # name -> text, loaded before the cell runs
            **fields,
        }
        try:
            self.send(header, body)
        except TransportClosed as exc:
            self._lost(describe_exit(self.handle), exc)
        return self._await_done(cell_id, on_call, timeout_s or self.options.cell_timeout_s)

    def _await_done(self, cell_id: int, on_call: Callable[[Frame], None], timeout_s: float) -> CellResult:
        deadline = time.monotonic() + timeout_s
        interrupted = False
        transport = self.handle.transport
        budget = _CellBudget(self.limits)
        while True:
            try:
                frame = transport.recv_frame(timeout=max(deadline - time.monotonic(), 0.0))
            except TimeoutError:
                if not interrupted:
                    interrupted = True
                    self._send_quietly({"t": "interrupt"})
                    deadline = time.monotonic() + self.options.interrupt_grace_s
                    continue
                self._lost(
                    f"the cell exceeded the {timeout_s:g} s limit and did not stop within "
                    f"{self.options.interrupt_grace_s:g} s of an interrupt, so the sandbox was killed"
                )
            except TransportClosed as exc:
                self._lost(describe_exit(self.handle), exc)
            except FrameError as exc:
                self._lost(f"the sandbox broke the protocol ({exc})", exc)
            if over := budget.spend(frame):
                frame.done()
                self._lost(f"the sandbox broke the protocol ({over})")
            if frame.kind == "call":
                on_call(frame)  # the bridge calls frame.done() once the call is answered
                continue
            frame.done()
            if frame.kind == "done" and frame.header.get("id") == cell_id:
                kind = str(frame.header.get("kind", ""))
                output = str(frame.header.get("output", ""))
                cap = 2 * self.options.output_max_chars + 200  # never trust the worker's own cap
                if len(output) > cap:
                    output = output[:cap] + "\n... [output truncated by the host] ..."
                return CellResult(kind, output, int(frame.header.get("omitted") or 0), frame.header)
            elif frame.kind != "done":  # a stale or forged `done` for another cell is ignored
                self._lost(f"the sandbox sent an unexpected {frame.kind!r} frame")

    def interrupt(self) -> None:
        """Ask the worker to interrupt the running cell (SIGINT; a no-op between cells)."""
        self._send_quietly({"t": "interrupt"})

    def _send_quietly(self, header: dict[str, Any]) -> None:
        try:
            self.send(header)
        except TransportClosed:
            pass

    def _lost(self, reason: str, cause: BaseException | None = None) -> NoReturn:
        self.close()
        raise WorkerLost(reason) from cause

    def close(self) -> None:
        if self._dead:
            return
        self._dead = True
        try:
            self.send({"t": "shutdown"})
        except (TransportClosed, OSError):
            pass
        self.handle.kill()
