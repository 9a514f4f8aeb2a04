"""Pick the configured backend: a pool whose workers run locally or in Daytona, behind the same interface."""

from __future__ import annotations

from fleet_rlm.config import Settings
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.pool import SandboxPool


def build_pool(settings: Settings, **overrides: object) -> SandboxPool:
    """The session pool for `settings.sandbox_backend`. Daytona sandboxes are found again by label, so its pool
    keeps no pre-started spares (a spare would be a billed, idle sandbox)."""
    options = SandboxOptions.from_settings(settings, **overrides)
    if settings.sandbox_backend == "daytona":
        from fleet_rlm.sandbox.daytona import DaytonaOptions, shared_backend

        backend = shared_backend(DaytonaOptions.from_settings(settings))
        return SandboxPool(options, size=0, idle_timeout_s=settings.sandbox_idle_timeout_s, spawn=backend.spawner())
    return SandboxPool(options, size=settings.sandbox_pool_size, idle_timeout_s=settings.sandbox_idle_timeout_s)
