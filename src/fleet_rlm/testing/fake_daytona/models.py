"""Records the fake keeps for sandboxes, snapshots and volumes, and their full wire bodies.

The SDK validates response DTOs strictly (every required field, strict types), so `to_dto` methods always emit
complete bodies with the real API's camelCase names.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ORGANIZATION_ID = "fake-org"
TARGET = "us"


def now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def new_id() -> str:
    return str(uuid.uuid4())


@dataclass
class SnapshotRecord:
    name: str
    image_name: str | None = None
    cpu: int = 1
    gpu: int = 0
    mem: int = 1
    disk: int = 3
    entrypoint: list[str] | None = None
    dockerfile: str | None = None
    state: str = "active"
    id: str = field(default_factory=new_id)
    created_at: str = field(default_factory=now_iso)

    def to_dto(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "organizationId": ORGANIZATION_ID,
            "general": False,
            "name": self.name,
            "imageName": self.image_name or self.name,
            "state": self.state,
            "size": 0.1,
            "entrypoint": self.entrypoint,
            "cpu": self.cpu,
            "gpu": self.gpu,
            "mem": self.mem,
            "disk": self.disk,
            "errorReason": None,
            "createdAt": self.created_at,
            "updatedAt": self.created_at,
            "lastUsedAt": None,
            "regionIds": [TARGET],
            "ref": self.image_name or self.name,
            "sourceSandboxId": None,
        }


@dataclass
class VolumeRecord:
    name: str
    host_dir: Path
    state: str = "ready"
    id: str = field(default_factory=new_id)
    created_at: str = field(default_factory=now_iso)

    def to_dto(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "organizationId": ORGANIZATION_ID,
            "state": self.state,
            "createdAt": self.created_at,
            "updatedAt": self.created_at,
            "lastUsedAt": self.created_at,
            "errorReason": None,
        }


@dataclass
class SandboxRecord:
    root: Path
    toolbox_base: str
    name: str = ""
    snapshot: str | None = None
    user: str = "daytona"
    env: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    public: bool = False
    network_block_all: bool = False
    network_allow_list: str | None = None
    domain_allow_list: str | None = None
    cpu: int = 1
    gpu: int = 0
    memory: int = 1
    disk: int = 3
    state: str = "started"
    auto_stop_interval: int = 15
    auto_archive_interval: int = 10080
    auto_delete_interval: int = -1
    volumes: list[dict[str, Any]] = field(default_factory=list)
    id: str = field(default_factory=new_id)
    created_at: str = field(default_factory=now_iso)
    updated_at: str = field(default_factory=now_iso)

    def touch(self) -> None:
        self.updated_at = now_iso()

    def desired_state(self) -> str:
        return {"stopped": "stopped", "destroyed": "destroyed", "archived": "archived"}.get(self.state, "started")

    def list_item(self) -> dict[str, Any]:
        """The fields shared by the list item and the full sandbox DTO."""
        return {
            "id": self.id,
            "organizationId": ORGANIZATION_ID,
            "name": self.name or self.id,
            "target": TARGET,
            "runnerId": "fake-runner",
            "sandboxClass": "container",
            "state": self.state,
            "desiredState": self.desired_state(),
            "snapshot": self.snapshot,
            "user": self.user,
            "recoverable": False,
            "public": self.public,
            "networkBlockAll": self.network_block_all,
            "networkAllowList": self.network_allow_list,
            "domainAllowList": self.domain_allow_list,
            "cpu": self.cpu,
            "gpu": self.gpu,
            "spot": False,
            "memory": self.memory,
            "disk": self.disk,
            "labels": dict(self.labels),
            "backupState": "None",
            "autoStopInterval": self.auto_stop_interval,
            "autoPauseInterval": 0,
            "autoArchiveInterval": self.auto_archive_interval,
            "autoDeleteInterval": self.auto_delete_interval,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "lastActivityAt": self.updated_at,
            "daemonVersion": "fake-0.1",
            "toolboxProxyUrl": self.toolbox_base,
        }

    def to_dto(self) -> dict[str, Any]:
        body = self.list_item()
        body.update(
            {
                "env": dict(self.env),
                "kvm": False,
                "volumes": [dict(v) for v in self.volumes],
                "sandboxClass": "container",
            }
        )
        return body
