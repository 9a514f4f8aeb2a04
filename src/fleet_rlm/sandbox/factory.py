"""The factory `dspy.RLM(interpreter_factory=...)` (and `dspy.Flex`) takes: one class for every backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fleet_rlm.config import Settings
from fleet_rlm.sandbox.backend import SandboxBackend
from fleet_rlm.sandbox.backends import backend_named
from fleet_rlm.sandbox.interpreter import Returns, SandboxInterpreter
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.pool import SandboxPool
from fleet_rlm.sandbox.roots import validate_workspace_id


class InterpreterFactory:
    """Zero-argument callable creating one `SandboxInterpreter` per RLM forward, on one backend.

    Construction checks isolation (refusing early when it is required but the backend cannot give it) and fixes
    the backend's `execution_instructions`, which RLM puts in the action prompt."""

    def __init__(
        self,
        options: SandboxOptions,
        backend: SandboxBackend,
        *,
        pool: SandboxPool | None = None,
        session_id: str | None = None,
        workspace_id: str | None = None,
        context_session: str | None = None,
        parent_id: str | None = None,
        returns: Returns = "value",
    ) -> None:
        self.options = options
        self.backend = pool.backend if pool is not None else backend
        self.pool = pool
        self.session_id = session_id
        self.context_session = context_session
        self.parent_id = parent_id
        self.returns = returns
        self.workspace_id = validate_workspace_id(workspace_id or options.workspace_id)
        self.isolation = self.backend.isolation(options)
        self.execution_instructions = self.backend.instructions(options, self.workspace_id)

    def __call__(self) -> SandboxInterpreter:
        return SandboxInterpreter(
            options=self.options,
            backend=self.backend,
            pool=self.pool,
            session_id=self.session_id,
            workspace_id=self.workspace_id,
            context_session=self.context_session,
            parent_id=self.parent_id,
            returns=self.returns,
        )

    def child(self, *, workspace_id: str | None = None) -> InterpreterFactory:
        """A factory for a child RLM: a fresh sandbox per interpreter that reads this session's context."""
        return InterpreterFactory(
            self.options,
            self.backend,
            pool=self.pool,
            workspace_id=workspace_id or self.workspace_id,
            context_session=self.context_session or self.session_id,
            parent_id=self.parent_id or self.session_id,
            returns=self.returns,
        )

    def status(self) -> dict[str, Any]:
        return self.backend.status(self.options)


def interpreter_factory(
    backend: str | SandboxBackend | None = None,
    *,
    settings: Settings | None = None,
    data_dir: Path | str | None = None,
    pool: SandboxPool | None = None,
    session_id: str | None = None,
    workspace_id: str | None = None,
    context_session: str | None = None,
    parent_id: str | None = None,
    returns: Returns = "value",
    **options: Any,
) -> InterpreterFactory:
    """Build the factory `dspy.RLM(interpreter_factory=...)` takes.

    The backend is the pool's when a `pool` is given (leases are then warm and per session), else `backend`: a
    `SandboxBackend`, or a name ("local", "daytona"; default `settings.sandbox_backend`). `options` are
    `SandboxOptions` fields (isolation="reduced" forces reduced mode, require_isolation=True refuses without
    bubblewrap on the local backend, cell_timeout_s, memory_mb, batch_concurrency, ...); `data_dir` or
    `settings` locate `<data_dir>/workspaces/<workspace_id>`. `context_session` is the session whose context
    documents the sandbox sees read-only (default: `session_id`; a nested child passes its parent's session
    with `session_id=None` and `parent_id`). `returns` is what `execute` gives back: "value" (dspy's contract)
    or "transcript" (prints and the last value's repr as text).
    """
    settings = settings or Settings()
    if pool is not None:
        resolved = pool.options.with_changes(**options) if options else pool.options
    elif data_dir is not None:
        resolved = SandboxOptions(data_dir=Path(data_dir), **options)
    else:
        resolved = SandboxOptions.from_settings(settings, **options)
    if pool is not None:
        chosen = pool.backend
    elif backend is None or isinstance(backend, str):
        chosen = backend_named(backend or settings.sandbox_backend, settings)
    else:
        chosen = backend
    return InterpreterFactory(
        resolved,
        chosen,
        pool=pool,
        session_id=session_id,
        workspace_id=workspace_id,
        context_session=context_session,
        parent_id=parent_id,
        returns=returns,
    )
