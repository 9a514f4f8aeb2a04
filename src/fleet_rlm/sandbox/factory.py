"""The factory `dspy.RLM(interpreter_factory=...)` takes, for the local or the Daytona backend."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet_rlm.config import Settings
from fleet_rlm.errors import InvalidInput
from fleet_rlm.sandbox.interpreter import Returns, SandboxInterpreter, execution_instructions
from fleet_rlm.sandbox.launcher import resolve_isolation
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.pool import SandboxPool
from fleet_rlm.sandbox.roots import GUEST_ROOT
from fleet_rlm.sandbox.status import sandbox_status as _local_status

if TYPE_CHECKING:
    from fleet_rlm.sandbox.daytona import DaytonaInterpreterFactory


class InterpreterFactory:
    """Zero-argument callable creating one `SandboxInterpreter` per RLM forward."""

    def __init__(
        self,
        options: SandboxOptions,
        *,
        pool: SandboxPool | None = None,
        session_id: str | None = None,
        workspace_id: str | None = None,
        context_session: str | None = None,
        returns: Returns = "value",
    ) -> None:
        self.options = options
        self.returns = returns
        self.pool = pool
        self.session_id = session_id
        self.context_session = context_session
        self.workspace_id = workspace_id or options.workspace_id
        self.isolation = resolve_isolation(options)  # refuses early when isolation is required but missing
        guest_root = GUEST_ROOT if self.isolation == "bubblewrap" else str(options.workspaces_dir / self.workspace_id)
        self.execution_instructions = execution_instructions(options, self.isolation, guest_root)

    def __call__(self) -> SandboxInterpreter:
        return SandboxInterpreter(
            options=self.options,
            pool=self.pool,
            session_id=self.session_id,
            workspace_id=self.workspace_id,
            context_session=self.context_session,
            returns=self.returns,
        )

    def status(self) -> dict[str, Any]:
        return sandbox_status("local")


def sandbox_status(backend: str = "local", settings: Settings | None = None) -> dict[str, Any]:
    """Status of a backend for /ready and doctor; Daytona's is read from configuration (no network call)."""
    if backend == "daytona":
        from fleet_rlm.sandbox.daytona import DaytonaOptions, daytona_status

        return daytona_status(DaytonaOptions.from_settings(settings or Settings()))
    return _local_status(backend)


def interpreter_factory(
    backend: str = "local",
    *,
    settings: Settings | None = None,
    data_dir: Path | str | None = None,
    pool: SandboxPool | None = None,
    session_id: str | None = None,
    workspace_id: str | None = None,
    context_session: str | None = None,
    returns: Returns = "value",
    **options: Any,
) -> InterpreterFactory | DaytonaInterpreterFactory:
    """Build the factory `dspy.RLM(interpreter_factory=...)` takes.

    `options` are `SandboxOptions` fields (isolation="reduced" forces reduced mode, require_isolation=True
    refuses without bubblewrap, cell_timeout_s, memory_mb, batch_concurrency, ...). `data_dir` or `settings`
    locate `<data_dir>/workspaces/<workspace_id>`; a `pool` makes leases warm and per-session.
    `context_session` is the session whose context documents the sandbox sees read-only (default:
    `session_id`; a nested child passes its parent's session with `session_id=None`). `returns` is what
    `execute` gives back: "value" (dspy's contract) or "transcript" (prints and the last value's repr as text).
    backend="daytona" takes the same arguments plus `daytona=` and `reuse=` (see `sandbox.daytona`).
    """
    if backend == "daytona":
        from fleet_rlm.sandbox.daytona import daytona_interpreter_factory

        return daytona_interpreter_factory(
            settings=settings,
            data_dir=data_dir,
            pool=pool,
            session_id=session_id,
            workspace_id=workspace_id,
            context_session=context_session,
            returns=returns,
            **options,
        )
    if backend != "local":
        raise InvalidInput(
            f"sandbox backend {backend!r} is not available here",
            code="sandbox_backend_unknown",
            action="use backend='local' or backend='daytona'",
        )
    if pool is not None:
        resolved = pool.options.with_changes(**options) if options else pool.options
    elif settings is not None:
        resolved = SandboxOptions.from_settings(settings, **options)
    elif data_dir is not None:
        resolved = SandboxOptions(data_dir=Path(data_dir), **options)
    else:
        resolved = SandboxOptions.from_settings(Settings(), **options)
    return InterpreterFactory(
        resolved,
        pool=pool,
        session_id=session_id,
        workspace_id=workspace_id,
        context_session=context_session,
        returns=returns,
    )
