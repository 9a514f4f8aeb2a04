"""DSPy `CodeInterpreter` on Daytona: the local `SandboxInterpreter` with workers spawned in Daytona sandboxes.

Everything above the transport is shared with the local backend (cells, timeouts, resets, the host bridge, the
context cache), so behaviour only differs where the platform does. `DaytonaInterpreterFactory` is what
`dspy.RLM(interpreter_factory=...)` takes; `child()` gives child RLMs independent sandboxes of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fleet_rlm.sandbox.daytona.backend import DaytonaBackend
from fleet_rlm.sandbox.daytona.status import daytona_status
from fleet_rlm.sandbox.interpreter import Returns, SandboxInterpreter, context_instructions
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.roots import GUEST_ROOT, validate_workspace_id
from fleet_rlm.sandbox.session import Spawn, WorkerSession

if TYPE_CHECKING:
    from fleet_rlm.sandbox.pool import SandboxPool


def daytona_instructions(options: SandboxOptions) -> str:
    return (
        "Code runs as CPython in a Daytona cloud sandbox (its own VM-like container; network as configured). "
        "Globals, imports and functions persist across executions. "
        f"WORKSPACE_ROOT ({GUEST_ROOT}) holds memory/ (MEMORIES.md), artifacts/, buffers/ and meta/, which "
        "persist across sessions on a Daytona volume; the working directory is WORKSPACE_ROOT. "
        + context_instructions("/context, or ~/.fleet-context")
        + "Host tools, llm_query, llm_query_batched and SUBMIT are global functions; a failing host call "
        "raises ToolError. "
        f"Each execution may run {options.cell_timeout_s:g} s (then KeyboardInterrupt; state is kept) and "
        f"output beyond {options.output_max_chars} characters is elided in the middle."
    )


class DaytonaInterpreter(SandboxInterpreter):
    """`SandboxInterpreter` whose workers run in Daytona sandboxes (via `spawn`)."""

    def __init__(self, *args: Any, spawn: Spawn, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._spawn = spawn

    @property
    def execution_instructions(self) -> str:
        return daytona_instructions(self.options)

    def _new_worker(self) -> WorkerSession:
        session = WorkerSession(self.options, self.workspace_id, spawn=self._spawn)
        session.wait_ready()
        return session


class DaytonaInterpreterFactory:
    """Zero-argument callable creating one `DaytonaInterpreter` per RLM forward."""

    def __init__(
        self,
        options: SandboxOptions,
        backend: DaytonaBackend,
        *,
        pool: SandboxPool | None = None,
        session_id: str | None = None,
        workspace_id: str | None = None,
        context_session: str | None = None,
        role: str = "root",
        parent_id: str | None = None,
        reuse: bool | None = None,
        returns: Returns = "value",
    ) -> None:
        self.options = options
        self.returns = returns
        self.backend = backend
        self.pool = pool
        self.session_id = session_id
        self.context_session = context_session
        self.workspace_id = validate_workspace_id(workspace_id or options.workspace_id)
        self.isolation = "daytona"
        self.spawn: Spawn = backend.spawner(session_id=session_id, role=role, parent_id=parent_id, reuse=reuse)
        self.execution_instructions = daytona_instructions(options)

    def __call__(self) -> DaytonaInterpreter:
        return DaytonaInterpreter(
            options=self.options,
            pool=self.pool,
            session_id=self.session_id,
            workspace_id=self.workspace_id,
            context_session=self.context_session,
            spawn=self.spawn,
            returns=self.returns,
        )

    def child(self, *, workspace_id: str | None = None, parent_id: str | None = None) -> DaytonaInterpreterFactory:
        """A factory for a child RLM: a fresh sandbox per interpreter (same volume), deleted when it ends."""
        return DaytonaInterpreterFactory(
            self.options,
            self.backend,
            workspace_id=workspace_id or self.workspace_id,
            context_session=self.context_session or self.session_id,
            role="child",
            parent_id=parent_id or self.session_id,
            reuse=False,
            returns=self.returns,
        )

    def status(self) -> dict[str, Any]:
        return {**daytona_status(self.backend.options), **self.backend.status()}
