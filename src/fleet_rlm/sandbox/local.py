"""The local backend: workers are subprocesses of this host, under bubblewrap or with limits only ("reduced")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fleet_rlm.sandbox.context_view import GUEST_CONTEXT
from fleet_rlm.sandbox.instructions import local_instructions
from fleet_rlm.sandbox.launcher import resolve_isolation, spawn_worker
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.roots import GUEST_ROOT
from fleet_rlm.sandbox.status import sandbox_status

if TYPE_CHECKING:
    from fleet_rlm.sandbox.session import Spawn


class LocalBackend:
    name = "local"
    keeps_spares = True

    def spawner(self, *, session_id: str | None = None, role: str = "root", parent_id: str | None = None) -> Spawn:
        """Every local worker starts the same way: labels mean nothing here."""
        del session_id, role, parent_id
        return spawn_worker

    def isolation(self, options: SandboxOptions) -> str:
        return resolve_isolation(options)

    def instructions(self, options: SandboxOptions, workspace_id: str) -> str:
        isolation = self.isolation(options)
        if isolation == "bubblewrap":
            return local_instructions(options, isolation, GUEST_ROOT, GUEST_CONTEXT)
        guest_root = str(options.workspaces_dir / workspace_id)
        return local_instructions(options, isolation, guest_root, "a per-sandbox directory")

    def status(self, options: SandboxOptions | None = None) -> dict[str, Any]:
        status = sandbox_status(self.name)
        required = options is not None and options.require_isolation
        status["usable"] = not (required and status["isolation"] != "bubblewrap")
        if not status["usable"]:
            status["reason"] = "FLEET_SANDBOX_REQUIRE_ISOLATION is set but bubblewrap is unavailable"
        return status
