"""Whether the configured sandbox backend can run code now, as /ready, /api/v1/info and doctor report it."""

from __future__ import annotations

from typing import Any

from fleet_rlm.config import Settings
from fleet_rlm.sandbox import sandbox_status


def sandbox_readiness(settings: Settings) -> dict[str, Any]:
    """The backend's status plus `usable`: false when isolation is required but missing, or Daytona unset."""
    status = dict(sandbox_status(settings.sandbox_backend, settings))
    usable = True
    if settings.sandbox_backend == "local":
        if settings.sandbox_require_isolation and status.get("isolation") != "bubblewrap":
            usable = False
            status["reason"] = "FLEET_SANDBOX_REQUIRE_ISOLATION is set but bubblewrap is unavailable"
    elif not (settings.daytona_api_key and settings.daytona_api_url):
        usable = False
        status["reason"] = "set DAYTONA_API_KEY and DAYTONA_API_URL"
    status["usable"] = usable
    return status
