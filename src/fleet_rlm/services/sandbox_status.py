"""Whether the configured sandbox backend can run code now, as /ready, /api/v1/info and doctor report it."""

from __future__ import annotations

from typing import Any

from fleet_rlm.config import Settings
from fleet_rlm.sandbox import backend_status


def sandbox_readiness(settings: Settings) -> dict[str, Any]:
    """The backend's status with `usable`: false when isolation is required but missing, or Daytona unset."""
    return dict(backend_status(settings))
