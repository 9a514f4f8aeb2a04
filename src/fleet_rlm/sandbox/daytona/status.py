"""What the Daytona backend is configured to do, for /ready, /api/v1/info and `fleet doctor`.

Configuration only, no network call (readiness probes must be fast); `fleet-rlm daytona-smoke` is the live check.
"""

from __future__ import annotations

from typing import Any

from fleet_rlm.sandbox.daytona.options import DaytonaOptions, worker_version


def network_policy(options: DaytonaOptions) -> str:
    if options.network_allow_list:
        return f"allow-list ({options.network_allow_list})"
    return "blocked" if options.network_block_all else "open"


def daytona_status(options: DaytonaOptions) -> dict[str, Any]:
    configured = bool(options.api_key and options.api_url)
    return {
        "backend": "daytona",
        "isolation": "daytona",
        "configured": configured,
        "usable": configured,
        "api_url": options.api_url,
        "target": options.target,
        "snapshot": options.snapshot,
        "volume": options.volume,
        "network": network_policy(options),
        "auto_stop_minutes": options.auto_stop_minutes,
        "auto_delete_minutes": options.auto_delete_minutes,
        "worker_version": worker_version(),
        "reason": (
            "code runs in Daytona sandboxes; durable roots live on a Daytona volume"
            if configured
            else "set DAYTONA_API_KEY and DAYTONA_API_URL"
        ),
    }
