"""Sandbox options: one frozen value built from `Settings` (or by hand in tests), shared by every sandbox.

Kept separate from `config.Settings` so the sandbox layer can be used without the server (and tests can force
reduced isolation), while `from_settings` keeps the user-visible names in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from fleet_rlm.config import Settings

IsolationChoice = Literal["auto", "bubblewrap", "reduced"]


@dataclass(frozen=True)
class SandboxOptions:
    data_dir: Path
    workspace_id: str = "default"
    isolation: IsolationChoice = "auto"
    require_isolation: bool = False
    memory_mb: int = 1024
    cpu_seconds: int = 600
    max_processes: int = 64
    max_file_mb: int = 512
    tmp_mb: int = 256
    cell_timeout_s: float = 120.0
    interrupt_grace_s: float = 3.0
    startup_timeout_s: float = 15.0
    output_max_chars: int = 20_000
    batch_concurrency: int = 8
    call_concurrency: int = 16
    inline_max_bytes: int = 64 * 1024
    max_resets: int = 3

    @property
    def workspaces_dir(self) -> Path:
        return self.data_dir / "workspaces"

    def with_changes(self, **changes: Any) -> SandboxOptions:
        return replace(self, **changes)

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> SandboxOptions:
        base = cls(
            data_dir=settings.data_dir,
            require_isolation=settings.sandbox_require_isolation,
            memory_mb=settings.sandbox_memory_mb,
            cpu_seconds=settings.sandbox_cpu_seconds,
            max_processes=settings.sandbox_max_processes,
            max_file_mb=settings.sandbox_max_file_mb,
            cell_timeout_s=settings.sandbox_cell_timeout_s,
            output_max_chars=settings.sandbox_output_max_chars,
            isolation=settings.sandbox_isolation,
            interrupt_grace_s=settings.sandbox_interrupt_grace_s,
            tmp_mb=settings.sandbox_tmp_mb,
            batch_concurrency=settings.batch_concurrency,
        )
        return replace(base, **overrides)
