"""Daytona backend options: one frozen value built from `Settings`, shared by every Daytona sandbox.

Separate from `SandboxOptions` (limits, timeouts: the same for both backends) because these say *where* and
*how* sandboxes are made: API endpoint, snapshot, volume, network policy, lifetimes, reuse.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any

from fleet_rlm.config import Settings
from fleet_rlm.sandbox.worker_code import SANDBOX_DIR, WORKER_MODULES

WORKER_FILES = (*WORKER_MODULES, "worker_lines.py")
BAKED_DIR = "/opt/fleet-rlm"  # where `daytona-snapshot` puts the worker (per version)
UPLOAD_DIR = ".fleet-rlm"  # relative to the sandbox user's home: used when the snapshot lacks this version
LABEL_APP = "fleet-rlm"


def worker_sources() -> dict[str, bytes]:
    return {name: (SANDBOX_DIR / name).read_bytes() for name in WORKER_FILES}


def worker_version() -> str:
    """Content hash of the worker files: a snapshot only counts as 'baked' for the exact same worker."""
    digest = hashlib.sha256()
    for name, data in sorted(worker_sources().items()):
        digest.update(name.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class DaytonaOptions:
    api_key: str | None = None
    api_url: str | None = None
    target: str | None = None
    snapshot: str = "fleet-rlm-worker"
    volume: str = "fleet-rlm-workspaces"
    network_block_all: bool = True
    network_allow_list: str | None = None
    auto_stop_minutes: int = 15
    auto_delete_minutes: int = 60
    python: str = "python3"
    create_timeout_s: float = 120.0
    request_timeout_s: float = 60.0
    max_post_bytes: int = 4 * 1024 * 1024  # stdin data per request; larger frames span several requests

    def with_changes(self, **changes: Any) -> DaytonaOptions:
        return replace(self, **changes)

    @property
    def network(self) -> dict[str, Any]:
        """SDK create parameters: an allow-list overrides block-all (as the setting documents)."""
        if self.network_allow_list:
            return {"network_allow_list": self.network_allow_list, "network_block_all": False}
        return {"network_block_all": self.network_block_all}

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> DaytonaOptions:
        key = settings.daytona_api_key.get_secret_value() if settings.daytona_api_key else None
        base = cls(
            api_key=key,
            api_url=settings.daytona_api_url,
            target=settings.daytona_target,
            snapshot=settings.daytona_snapshot,
            volume=settings.daytona_volume,
            network_block_all=settings.daytona_network_block_all,
            network_allow_list=settings.daytona_network_allow_list,
            auto_stop_minutes=settings.daytona_auto_stop_minutes,
            auto_delete_minutes=settings.daytona_auto_delete_minutes,
        )
        return replace(base, **overrides)
