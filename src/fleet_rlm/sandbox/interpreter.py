"""`SandboxInterpreter`: DSPy's `CodeInterpreter` protocol over a sandboxed worker session.

Error split (what `dspy.RLM` expects): the model's code failing -> `CodeExecutionError` (fed back to the
model); invalid syntax -> `SyntaxError`; a sandbox broken beyond repair -> `CodeInterpreterError`.
A worker that dies mid-session (killed after a timeout, `os._exit`, CPU limit) is replaced and the model is
told through a `CodeExecutionError` that its REPL state was reset; only after `max_resets` is it terminal.
The dspy facade (installed by RLM through `execute`) is replayed into a replacement worker.

Results follow dspy's contract (`returns="value"`): a cell whose last expression is JSON returns that value
(`execute("1+1") == 2`, as `dspy.LocalInterpreter`; what it printed is then dropped, as there); any other cell
returns its text: what it printed, then the repr of a non-JSON last value. `returns="transcript"` always gives
that text, as a REPL shows it (the RLM turns show the model both its prints and the value).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import keyword
import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from dspy.primitives.code_interpreter import CodeExecutionError, CodeInterpreterError, FinalOutput
from dspy.utils.callback import BaseCallback, with_callbacks

from fleet_rlm.errors import FleetError
from fleet_rlm.sandbox.bridge import HostBridge
from fleet_rlm.sandbox.local import LocalBackend
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.repl_globals import ReplGlobals, parse_globals
from fleet_rlm.sandbox.repl_state import ReplState, ReplStateTracker, parse_restored
from fleet_rlm.sandbox.session import CellResult, WorkerLost, WorkerSession

if TYPE_CHECKING:
    from fleet_rlm.sandbox.backend import SandboxBackend
    from fleet_rlm.sandbox.pool import SandboxPool

Returns = Literal["value", "transcript"]
RESERVED = frozenset({"SUBMIT", "__builtins__", "ToolError", "WORKSPACE_ROOT", "CONTEXT_DIR"})
FACADE_TOKEN_VAR = "__dspy_host_token"  # dspy.primitives.facade.HOST_TOKEN_VAR: marks the facade install


class SandboxInterpreter:
    """One RLM forward's REPL on one backend: its worker is leased from `pool` (which owns the backend) or spawned
    by `backend` (default: local). With a pool and a session id, the worker and its state outlive `shutdown`;
    `parent_id` marks a child RLM's sandbox (Daytona labels it)."""

    def __init__(
        self,
        tools: dict[str, Callable[..., Any]] | None = None,
        output_fields: list[dict[str, Any]] | None = None,
        *,
        options: SandboxOptions,
        backend: SandboxBackend | None = None,
        pool: SandboxPool | None = None,
        session_id: str | None = None,
        workspace_id: str | None = None,
        context_session: str | None = None,
        parent_id: str | None = None,
        callbacks: list[BaseCallback] | None = None,
        returns: Returns = "value",
    ) -> None:
        self.tools: dict[str, Callable[..., Any]] = dict(tools or {})
        self.output_fields = output_fields
        self.options = options
        self.callbacks = list(callbacks or [])
        self.returns = returns
        self.workspace_id = workspace_id or options.workspace_id
        self._pool = pool
        self.backend: SandboxBackend = pool.backend if pool is not None else backend or LocalBackend()
        self._session_id = session_id
        self._parent_id = parent_id
        self.context_session = context_session if context_session is not None else session_id
        self._session: WorkerSession | None = None
        self._bridge = HostBridge(
            self.tools,
            self.invoke_tool,
            call_concurrency=options.call_concurrency,
            batch_concurrency=options.batch_concurrency,
        )
        self._lock = threading.Lock()
        self._setup_cells: list[tuple[str, dict[str, Any]]] = []
        self._resets = 0
        self._ended = False
        self.last_globals: ReplGlobals | None = None
        """The REPL's user-visible globals after the last cell (transcript hosts only; None after a reset)."""
        self._state = ReplStateTracker()
        self._restore: dict[str, str] | None = None
        self.last_state: ReplState | None = None
        """The REPL's variables as data after the last cell (transcript hosts only; sandbox/repl_state.py)."""
        self.last_restore: tuple[list[str], dict[str, str]] | None = None
        """(restored names, {name: why not}) of the last `restore_state`, once the cell that loaded it ran."""

    @property
    def execution_instructions(self) -> str:
        return self.backend.instructions(self.options, self.workspace_id)

    @property
    def isolation(self) -> str | None:
        return self._session.isolation if self._session else None

    # --- lifecycle -----------------------------------------------------------------------------------------
    @with_callbacks
    def start(self) -> None:
        if self._ended:
            raise CodeInterpreterError("this sandbox interpreter was shut down; create a new one")
        if self._session is None:
            self._session = self._acquire()

    def _acquire(self) -> WorkerSession:
        """A ready worker (leased from the pool, else new) that sees this session's context."""
        try:
            if self._pool is not None:
                session = self._pool.lease(self._session_id, self.workspace_id, parent_id=self._parent_id)
            else:
                session = self._new_worker()
            try:
                session.attach_context(self.context_session)
            except BaseException:
                self._drop(session)
                raise
            return session
        except FleetError as exc:
            raise CodeInterpreterError(f"[{exc.code}] {exc.message} — {exc.action or ''}".rstrip(" —")) from exc
        except WorkerLost as exc:
            raise CodeInterpreterError(f"sandbox unavailable: {exc.reason}") from exc

    def _new_worker(self) -> WorkerSession:
        role = "child" if self._parent_id else "root"
        spawn = self.backend.spawner(session_id=self._session_id, role=role, parent_id=self._parent_id)
        session = WorkerSession(self.options, self.workspace_id, spawn=spawn)
        session.wait_ready()
        return session

    def _drop(self, session: WorkerSession) -> None:
        if self._pool is not None:
            self._pool.discard(self._session_id, session)
        else:
            session.close()

    @with_callbacks
    def shutdown(self) -> None:
        if self._ended:
            return
        self._ended = True
        session, self._session = self._session, None
        if session is not None:
            if self._pool is not None:
                self._pool.release(self._session_id, session)
            else:
                session.close()
        self._bridge.close()

    def interrupt(self) -> None:
        """Interrupt the running cell (SIGINT in the worker; REPL state survives). Safe from any thread."""
        session = self._session
        if session is not None:
            session.interrupt()

    def kill(self) -> None:
        """Kill the worker now, from any thread: a running `execute` reports a sandbox reset (state is lost)."""
        session = self._session
        if session is not None:
            session.close()

    def __enter__(self) -> SandboxInterpreter:
        self.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.shutdown()

    # --- tools ---------------------------------------------------------------------------------------------
    @with_callbacks
    def invoke_tool(self, tool_name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Run one host tool for guest code (callbacks see it as `on_interpreter_tool_call_*`)."""
        return self.tools[tool_name](*args, **kwargs)

    # --- execution -----------------------------------------------------------------------------------------
    def __call__(self, code: str, variables: dict[str, Any] | None = None) -> Any:
        return self.execute(code, variables)

    @with_callbacks
    def execute(self, code: str, variables: dict[str, Any] | None = None) -> Any:
        if not self._lock.acquire(blocking=False):
            raise CodeInterpreterError("this sandbox is already executing a cell")
        try:
            variables = dict(variables or {})
            self._validate(code, variables)
            if self._session is None:  # start() is a dspy callback event: only when it starts something
                self.start()
            assert self._session is not None
            result = self._run(self._session, code, variables)
            if FACADE_TOKEN_VAR in variables and result.kind == "ok":
                self._setup_cells.append((code, variables))
            return self._to_dspy(result)
        finally:
            self._lock.release()

    def _validate(self, code: str, variables: dict[str, Any]) -> None:
        if not isinstance(code, str):
            raise CodeInterpreterError("code must be a string")
        bad = [
            name
            for name in [*self.tools, *variables]
            if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) or name in RESERVED
        ]
        clash = sorted(set(self.tools) & set(variables))
        if bad or clash:
            raise CodeInterpreterError(f"invalid tool/variable names {bad + clash}: use non-reserved identifiers")

    def restore_state(self, texts: dict[str, str]) -> None:
        """Load these variables (name -> worker_state text) into the REPL before the next model cell runs."""
        self._restore = dict(texts)

    def _run(self, session: WorkerSession, code: str, variables: dict[str, Any]) -> CellResult:
        self._bridge.bind_context(contextvars.copy_context())
        self.last_globals = self.last_state = None
        keep = self.returns == "transcript" and FACADE_TOKEN_VAR not in variables
        restore, self._restore = (self._restore, None) if keep else (None, self._restore)
        try:
            result = session.run_cell(
                code,
                variables,
                tools=self._bridge.guest_tool_names(),
                output_fields=self.output_fields,
                on_call=lambda frame: self._bridge.dispatch(frame, session.send),
                want_value=self.returns == "value",
                want_globals=keep,
                state=self._state.mode if keep else None,
                restore=restore,
            )
        except WorkerLost as lost:
            self._replace_after(lost)
        self.last_globals = parse_globals(result.header)
        if keep:
            self.last_state = self._state.update(result.header)
        if restore is not None:
            self.last_restore = parse_restored(result.header, restore)
        fatal, self._bridge.fatal = self._bridge.fatal, None
        if fatal is not None:
            raise fatal
        return result

    def _replace_after(self, lost: WorkerLost) -> Any:
        """Discard the dead worker, start a fresh one (replaying setup cells), and tell the model."""
        self._resets += 1
        self._state.reset()
        dead, self._session = self._session, None
        if dead is not None and self._pool is not None:
            self._pool.discard(self._session_id, dead)
        if self._resets > self.options.max_resets:
            self._ended = True
            raise CodeInterpreterError(f"sandbox lost {self._resets} times; giving up: {lost.reason}")
        fresh = self._acquire()
        self._session = fresh
        for code, variables in self._setup_cells:
            try:
                replay = fresh.run_cell(
                    code,
                    variables,
                    tools=self._bridge.guest_tool_names(),
                    output_fields=self.output_fields,
                    on_call=lambda frame: self._bridge.dispatch(frame, fresh.send),
                )
            except WorkerLost as exc:
                raise CodeInterpreterError(f"replacement sandbox failed during setup: {exc.reason}") from exc
            if replay.kind != "ok":
                raise CodeInterpreterError("replacement sandbox failed to replay its setup code")
        raise CodeExecutionError(
            f"[sandbox reset] {lost.reason}. The sandbox was replaced and all REPL state (variables, "
            "imports, functions) was lost; inputs are loaded again automatically and files under "
            "WORKSPACE_ROOT are kept. "
            "Re-run any setup you still need."
        )

    def _to_dspy(self, result: CellResult) -> Any:
        header = result.header
        if result.kind == "ok":
            if self.returns == "value" and isinstance(header.get("json"), str):
                with contextlib.suppress(ValueError):
                    return json.loads(header["json"])
            return transcript(result.output, header.get("repr"))
        if result.kind == "final":
            return FinalOutput(header.get("value"))
        if result.kind == "syntax":
            detail = (
                f"<cell {header.get('cell')}>",
                header.get("lineno"),
                header.get("offset"),
                header.get("text"),
            )
            raise SyntaxError(str(header.get("error")), detail)
        error = str(header.get("error", ""))
        if result.kind == "interrupted":
            error = (
                f"TimeoutError: the cell ran longer than {self.options.cell_timeout_s:g} s and was "
                f"interrupted (REPL state is kept).\n{error}"
            )
        output = result.output.rstrip("\n")
        raise CodeExecutionError(f"{output}\n{error}" if output else error)


def transcript(output: str, value_repr: Any) -> str | None:
    """A cell as a REPL shows it: what it printed, then the repr of its last expression (None when empty)."""
    text = output
    if value_repr is not None:
        text = f"{text}{'' if not text or text.endswith(chr(10)) else chr(10)}{value_repr}"
    return text.rstrip("\n") or None


def new_session_id() -> str:
    return uuid.uuid4().hex
