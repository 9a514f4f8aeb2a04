"""Choosing the backend: the one place a backend's name is read (`settings.sandbox_backend`, or a name given).

The server builds its pool once with `build_pool`; the pool owns the backend and everything else takes it from
there. Daytona's backend is shared per configuration (`daytona.shared_backend`), so its SDK (a heavy import)
loads only when it is chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fleet_rlm.config import Settings
from fleet_rlm.errors import InvalidInput
from fleet_rlm.sandbox.backend import SandboxBackend
from fleet_rlm.sandbox.local import LocalBackend
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.pool import SandboxPool


def _daytona(settings: Settings) -> SandboxBackend:
    from fleet_rlm.sandbox.daytona import DaytonaOptions, shared_backend

    return shared_backend(DaytonaOptions.from_settings(settings))


def _daytona_status(settings: Settings) -> dict[str, Any]:
    from fleet_rlm.sandbox.daytona import DaytonaOptions, daytona_status

    return daytona_status(DaytonaOptions.from_settings(settings))


_BACKENDS: dict[str, Callable[[Settings], SandboxBackend]] = {"local": lambda _: LocalBackend(), "daytona": _daytona}
_STATUS: dict[str, Callable[[Settings], dict[str, Any]]] = {
    "local": lambda s: LocalBackend().status(SandboxOptions.from_settings(s)),
    "daytona": _daytona_status,
}


def backend_named(name: str, settings: Settings) -> SandboxBackend:
    make = _BACKENDS.get(name)
    if make is None:
        raise InvalidInput(
            f"sandbox backend {name!r} is not available here (available: {', '.join(sorted(_BACKENDS))})",
            code="sandbox_backend_unknown",
        )
    return make(settings)


def backend_from_settings(settings: Settings) -> SandboxBackend:
    return backend_named(settings.sandbox_backend, settings)


def backend_status(settings: Settings) -> dict[str, Any]:
    """The configured backend's status for /ready, /api/v1/info and doctor: `backend`, `isolation`, `reason`,
    `usable` (isolation required but missing, or Daytona not configured). From configuration and a local
    probe only: no network call, no sandbox."""
    return _STATUS[settings.sandbox_backend](settings)


def build_pool(settings: Settings, backend: SandboxBackend | None = None, **overrides: Any) -> SandboxPool:
    """The session pool on the configured backend (spares only where the backend keeps them)."""
    return SandboxPool(
        SandboxOptions.from_settings(settings, **overrides),
        backend=backend or backend_from_settings(settings),
        size=settings.sandbox_pool_size,
        idle_timeout_s=settings.sandbox_idle_timeout_s,
    )
