"""The sandbox backend seam: where workers run, behind one interface.

A backend spawns workers (the local one as bubblewrap or reduced-isolation subprocesses, Daytona's in Daytona
sandboxes), says what the model is told about that place, checks the isolation it can give, and reports its
status. Everything above it (worker sessions, the pool, the interpreter and its factory) is shared. The
backend is chosen once from settings (`backends.backend_from_settings`) and owned by the session pool; code
outside the backend modules never tests a backend's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from fleet_rlm.sandbox.options import SandboxOptions

if TYPE_CHECKING:
    from fleet_rlm.sandbox.session import Spawn


class SandboxBackend(Protocol):
    name: str
    """"local" or "daytona": what /ready, the API and the sandbox list report."""
    keeps_spares: bool
    """Whether the pool pre-starts workers (a Daytona spare would be a billed, idle sandbox)."""

    def spawner(self, *, session_id: str | None = None, role: str = "root", parent_id: str | None = None) -> Spawn:
        """How to start a worker for this session (None: one-off) in role "root" or "child" of `parent_id`."""
        ...

    def isolation(self, options: SandboxOptions) -> str:
        """The isolation a new sandbox gets; raises `IsolationUnavailable` when `options` require more."""
        ...

    def instructions(self, options: SandboxOptions, workspace_id: str) -> str:
        """The execution instructions the model is shown for a sandbox of this workspace."""
        ...

    def status(self, options: SandboxOptions | None = None) -> dict[str, Any]:
        """For /ready and doctor: at least `backend`, `isolation`, `reason` and `usable` (no network call)."""
        ...
