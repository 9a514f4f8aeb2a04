"""`ObservedInterpreter`: a CodeInterpreter decorator around the sandbox's interpreter.

Around each RLM cell it emits `code` (before), `output` and `repl_variables` (after), checks the turn's stop
signal, interrupts the running cell when the turn stops, installs the turn's own llm_query/llm_query_batched
(events + shared budget) over the ones dspy.RLM generates, and scans artifacts/ afterwards. Setup cells (dspy's facade
install, serialized inputs) are silent, and wait for the first model cell: dspy.RLM runs them (and `start()`)
before its first LM call, so that call waited for the sandbox to be leased, i.e. for a new session's sandbox to
finish starting (under a burst of new sessions, hundreds of ms; seconds for a remote one). Deferred, the first
LM call and the sandbox's start overlap; the first model cell leases it and replays the setup first. A setup
cell that fails then ends the forward (`CodeInterpreterError`): it is dspy's fixed code. `ObservedFactory` is
the zero-argument factory handed to `dspy.RLM`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from dspy.primitives.code_interpreter import CodeExecutionError, CodeInterpreterError, FinalOutput
from dspy.primitives.facade import HOST_TOKEN_VAR

from fleet_rlm.events import Code, Output, ReplRestored, ReplVariable, ReplVariables, SandboxReset
from fleet_rlm.runtime.control import TurnControl
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.latest_step import LatestStep
from fleet_rlm.runtime.repl_snapshots import ReplRestore, ReplSnapshot, cell_record, replay_cell
from fleet_rlm.runtime.workspace import ArtifactWatcher

RESET_MARKER = "[sandbox reset]"
KILL_AFTER_S = 1.5
"""A cell that ignores the interrupt this long after a stop is killed (its REPL state is lost)."""


def interrupt_sandbox(interpreter: Any, *, hard: bool = False) -> None:
    """Interrupt the running cell (SIGINT in the worker; REPL state survives); `hard` kills the worker.

    Interpreters without `interrupt()`/`kill()` (dspy's own) cannot be stopped mid-cell; the turn then ends
    when the cell does.
    """
    method = getattr(interpreter, "kill" if hard else "interrupt", None)
    if callable(method):
        method()


def cut(text: str, limit: int) -> tuple[str, int]:
    """Head and tail of `text` within `limit` characters, and how many were omitted."""
    if len(text) <= limit:
        return text, 0
    half = max(limit // 2, 1)
    omitted = len(text) - 2 * half
    return f"{text[:half]}\n... [{omitted} chars omitted] ...\n{text[-half:]}", omitted


class ObservedInterpreter:
    def __init__(
        self,
        inner: Any,
        *,
        control: TurnControl,
        emitter: Emitter,
        llm_tools: dict[str, Callable[..., Any]],
        watcher: ArtifactWatcher | None = None,
        on_iteration: Callable[[int], None] | None = None,
        progress: LatestStep | None = None,
        snapshots: Callable[[ReplSnapshot], None] | None = None,
        restore: ReplRestore | None = None,
        replayed: tuple[dict[str, Any], ...] = (),
        on_live: Callable[[], None] | None = None,
    ) -> None:
        """`snapshots` receives the REPL after each cell; `restore` is loaded with the first cell that runs;
        `replayed` are recorded results of the first iterations, returned without running (a resumed run),
        after which `on_live` is called once."""
        self.inner = inner
        self.control = control
        self.emitter = emitter
        self.llm_tools = llm_tools
        self.watcher = watcher
        self.on_iteration = on_iteration
        self.progress = progress
        self.iteration = 0
        self.snapshots = snapshots
        self.restore = restore
        self.replayed = replayed
        self.on_live = on_live
        self._cell: dict[str, Any] = {}
        self._running = threading.Event()
        self._setup: list[tuple[str, dict[str, Any] | None]] | None = []  # None once the sandbox is leased

    @property
    def tools(self) -> dict[str, Callable[..., Any]]:
        return self.inner.tools  # type: ignore[no-any-return]

    @property
    def output_fields(self) -> Any:
        return getattr(self.inner, "output_fields", None)

    @output_fields.setter
    def output_fields(self, value: Any) -> None:
        self.inner.output_fields = value

    @property
    def execution_instructions(self) -> str:
        return str(getattr(self.inner, "execution_instructions", ""))

    def start(self) -> None:
        """Deferred to the first model cell (see the module docstring)."""

    def _lease(self) -> None:
        """Lease the sandbox and run the setup cells dspy.RLM gave before the first model cell, in order."""
        setup, self._setup = self._setup, None
        if setup is None:
            return
        self.inner.start()
        for code, variables in setup:
            try:
                self.inner.execute(code, variables)
            except (CodeExecutionError, SyntaxError) as exc:
                raise CodeInterpreterError(f"the sandbox's setup failed: {exc}") from exc

    def shutdown(self) -> None:
        self.inner.shutdown()

    def __call__(self, code: str, variables: dict[str, Any] | None = None) -> Any:
        return self.execute(code, variables)

    def execute(self, code: str, variables: dict[str, Any] | None = None) -> Any:
        if variables and (HOST_TOKEN_VAR in variables or any(k.startswith("_raw_") for k in variables)):
            if self._setup is not None:  # setup cells, not model steps: they run before the first model cell
                self._setup.append((code, dict(variables)))
                return None
            return self.inner.execute(code, variables)
        self.control.check()
        self._install_tools()
        self.iteration += 1
        self.control.count_iteration()
        if self.iteration <= len(self.replayed):  # a resumed run: this iteration already ran before
            return replay_cell(self.replayed[self.iteration - 1])
        if self.on_live is not None:
            self.on_live()
            self.on_live = None
        self.emitter.emit(Code, code=code, iteration=self.iteration)
        remove = self.control.on_stop(self._interrupt)
        self._running.set()
        try:
            self._lease()
            self.control.check()  # stopped while the sandbox was being leased
            self._load_restore()
            result = self.inner.execute(code, variables)
        except (CodeExecutionError, SyntaxError) as exc:
            if str(exc).startswith(RESET_MARKER):
                self.emitter.emit(SandboxReset, reason=str(exc)[len(RESET_MARKER) :].split(". ")[0].strip())
            self._cell = cell_record(error=exc)
            self._after(str(exc), "stderr")
            raise
        finally:
            self._running.clear()
            remove()
        self._cell = cell_record(result if not isinstance(result, FinalOutput) else None)
        if not isinstance(result, FinalOutput):
            self._after("" if result is None else str(result), "stdout")
        else:
            self._after("", "stdout")
        return result

    def _install_tools(self) -> None:
        """Our llm_query pair over RLM's (the sandbox bridge binds guest positionals to RLM's keyword tools)."""
        self.inner.tools.update(self.llm_tools)

    def _after(self, text: str, stream: str) -> None:
        self.control.check()  # a cell cut short by a stop is not fed back to the model
        if self.progress is not None:
            self.progress.note(output=text)
        if text:
            kept, omitted = cut(text, self.control.limits.max_output_chars)
            self.emitter.emit(Output, stream=stream, text=kept, omitted_chars=omitted, iteration=self.iteration)
        self._report_globals()
        self._report_restored()
        self._report_state()
        if self.watcher is not None:
            self.watcher.scan(self.emitter)
        if self.on_iteration is not None:
            self.on_iteration(self.iteration)

    def _report_globals(self) -> None:
        """The REPL's user-visible globals after the cell, when the sandbox reported them (ours does)."""
        report = getattr(self.inner, "last_globals", None)
        if report is None:
            return
        variables = [ReplVariable(**item.to_dict()) for item in report.variables]
        self.emitter.emit(ReplVariables, variables=variables, omitted=report.omitted, iteration=self.iteration)

    def _load_restore(self) -> None:
        """Hand the state to restore to the sandbox: it loads it before this cell runs."""
        if self.restore is not None and callable(getattr(self.inner, "restore_state", None)):
            self.inner.restore_state(self.restore.texts)

    def _report_restored(self) -> None:
        restore, self.restore = self.restore, None
        if restore is None:
            return
        report = getattr(self.inner, "last_restore", None)
        restored, failed = (
            report if report is not None else ([], {n: "the sandbox did not load it" for n in restore.texts})
        )
        self.emitter.emit(
            ReplRestored,
            source=restore.source,
            source_run_id=restore.source_run_id,
            source_iteration=restore.iteration,
            restored=sorted(restored),
            not_restored={**restore.not_kept, **failed},
        )

    def _report_state(self) -> None:
        """The REPL as data after the cell (our sandbox reports it), to the turn's sink."""
        state = getattr(self.inner, "last_state", None)
        if state is None or self.snapshots is None:
            return
        actor = self.emitter.actor
        snapshot = ReplSnapshot(
            actor, self.emitter.depth, self.iteration, state.variables, state.blobs, state.skipped, self._cell
        )
        self.snapshots(snapshot)

    def _interrupt(self) -> None:
        if not self._running.is_set():
            return
        interrupt_sandbox(self.inner)

        def escalate() -> None:
            end = time.monotonic() + KILL_AFTER_S
            while time.monotonic() < end:
                if not self._running.is_set():
                    return
                time.sleep(0.05)
            interrupt_sandbox(self.inner, hard=True)

        threading.Thread(target=escalate, name="sandbox-kill-after-stop", daemon=True).start()


class ObservedFactory:
    """Zero-argument factory for dspy.RLM: one observed sandbox interpreter per forward."""

    def __init__(self, inner_factory: Callable[[], Any], make: Callable[[Any], ObservedInterpreter]) -> None:
        self._inner_factory = inner_factory
        self._make = make
        self.execution_instructions = str(getattr(inner_factory, "execution_instructions", ""))
        self.created: list[ObservedInterpreter] = []

    def __call__(self) -> ObservedInterpreter:
        interpreter = self._make(self._inner_factory())
        self.created.append(interpreter)
        return interpreter
