"""The fake's whole world: sandboxes (with their live sessions and interpreter contexts), snapshots, volumes.

All mutation happens on the server's event loop; `close()` may be called from another thread after the loop
has stopped. Sandbox roots and volume directories live under one temporary root owned by the server.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import FakeDaytonaError
from .fsmap import HOME, Mount, SandboxFS, normalize_guest
from .interpreter import InterpreterContext
from .models import SandboxRecord, SnapshotRecord, VolumeRecord
from .sessions import ShellSession


@dataclass
class RecordedCall:
    """One request the fake received, for assertions in tests (`fake.calls`)."""

    method: str
    path: str
    query: str
    body: Any = None
    status: int | None = None


@dataclass
class SandboxRuntime:
    """What only exists while a sandbox is started: its shells and interpreter processes."""

    fs: SandboxFS
    sessions: dict[str, ShellSession] = field(default_factory=dict)
    contexts: dict[str, InterpreterContext] = field(default_factory=dict)

    def close(self) -> None:
        for session in self.sessions.values():
            session.close()
        for context in self.contexts.values():
            context.close()
        self.sessions.clear()
        self.contexts.clear()


class FakeState:
    def __init__(self, root: Path, base_url: str, snapshots: tuple[str, ...], use_bwrap: bool | None) -> None:
        self.root = root
        self.base_url = base_url
        self.use_bwrap = use_bwrap
        self.sandboxes: dict[str, SandboxRecord] = {}
        self.runtimes: dict[str, SandboxRuntime] = {}
        self.snapshots: dict[str, SnapshotRecord] = {}
        self.volumes: dict[str, VolumeRecord] = {}
        self.calls: list[RecordedCall] = []
        for name in snapshots:
            self.add_snapshot(SnapshotRecord(name=name, image_name=name))

    # snapshots -----------------------------------------------------------------------------------------
    def add_snapshot(self, snapshot: SnapshotRecord) -> SnapshotRecord:
        if any(s.name == snapshot.name for s in self.snapshots.values()):
            raise FakeDaytonaError(409, f"Snapshot with name {snapshot.name} already exists")
        self.snapshots[snapshot.id] = snapshot
        return snapshot

    def snapshot(self, id_or_name: str) -> SnapshotRecord:
        for snap in self.snapshots.values():
            if id_or_name in (snap.id, snap.name):
                return snap
        raise FakeDaytonaError(404, f"Snapshot {id_or_name} not found")

    # volumes -------------------------------------------------------------------------------------------
    def create_volume(self, name: str) -> VolumeRecord:
        if any(v.name == name for v in self.volumes.values()):
            raise FakeDaytonaError(409, f"Volume with name {name} already exists")
        volume = VolumeRecord(name=name, host_dir=self.root / "volumes" / name)
        volume.host_dir.mkdir(parents=True, exist_ok=True)
        self.volumes[volume.id] = volume
        return volume

    def volume(self, id_or_name: str) -> VolumeRecord:
        for volume in self.volumes.values():
            if id_or_name in (volume.id, volume.name):
                return volume
        raise FakeDaytonaError(404, f"Volume {id_or_name} not found")

    def delete_volume(self, volume_id: str) -> None:
        volume = self.volume(volume_id)
        del self.volumes[volume.id]
        shutil.rmtree(volume.host_dir, ignore_errors=True)

    # sandboxes -----------------------------------------------------------------------------------------
    def sandbox(self, id_or_name: str) -> SandboxRecord:
        record = self.sandboxes.get(id_or_name)
        if record is None:
            record = next((s for s in self.sandboxes.values() if s.name == id_or_name), None)
        if record is None:
            raise FakeDaytonaError(404, f"Sandbox with ID or name {id_or_name} not found")
        return record

    def create_sandbox(self, body: dict[str, Any]) -> SandboxRecord:
        name = body.get("name")
        if name and any(s.name == name for s in self.sandboxes.values()):
            raise FakeDaytonaError(409, f"Sandbox with name {name} already exists")
        snapshot = self.snapshot(body["snapshot"]) if body.get("snapshot") else None
        mounts: list[dict[str, Any]] = []
        for raw in body.get("volumes") or []:
            volume = self.volume(raw["volumeId"])
            mount_path = normalize_guest(raw["mountPath"], "/")
            mounts.append({"volumeId": volume.id, "mountPath": mount_path, "subpath": raw.get("subpath")})
        record = SandboxRecord(
            root=Path(),
            toolbox_base=f"{self.base_url}/toolbox",
            snapshot=snapshot.name if snapshot else None,
            user=body.get("user") or "daytona",
            env=dict(body.get("env") or {}),
            labels=dict(body.get("labels") or {}),
            public=bool(body.get("public", False)),
            network_block_all=bool(body.get("networkBlockAll", False)),
            network_allow_list=body.get("networkAllowList"),
            domain_allow_list=body.get("domainAllowList"),
            cpu=int(body.get("cpu") or (snapshot.cpu if snapshot else 1)),
            gpu=int(body.get("gpu") or 0),
            memory=int(body.get("memory") or (snapshot.mem if snapshot else 1)),
            disk=int(body.get("disk") or (snapshot.disk if snapshot else 3)),
            volumes=mounts,
        )
        record.name = name or record.id
        for key, attr in (
            ("autoStopInterval", "auto_stop_interval"),
            ("autoArchiveInterval", "auto_archive_interval"),
            ("autoDeleteInterval", "auto_delete_interval"),
        ):
            if body.get(key) is not None:
                setattr(record, attr, int(body[key]))
        record.root = self.root / "sandboxes" / record.id
        self.sandboxes[record.id] = record
        self.start(record)
        return record

    def mounts(self, record: SandboxRecord) -> list[Mount]:
        result = []
        for raw in record.volumes:
            volume = self.volume(raw["volumeId"])
            host = volume.host_dir / raw["subpath"].strip("/") if raw.get("subpath") else volume.host_dir
            result.append(Mount(guest_path=raw["mountPath"], host_dir=host))
        return result

    def start(self, record: SandboxRecord) -> None:
        if record.id not in self.runtimes:
            fs = SandboxFS(record.root, self.mounts(record), use_bwrap=self.use_bwrap)
            self.runtimes[record.id] = SandboxRuntime(fs=fs)
        record.state = "started"
        record.touch()

    def stop(self, record: SandboxRecord) -> None:
        runtime = self.runtimes.pop(record.id, None)
        if runtime is not None:
            runtime.close()
        record.state = "stopped"
        record.touch()

    def delete(self, record: SandboxRecord) -> None:
        self.stop(record)
        record.state = "destroyed"
        del self.sandboxes[record.id]
        shutil.rmtree(record.root, ignore_errors=True)

    def runtime(self, sandbox_id: str) -> SandboxRuntime:
        record = self.sandbox(sandbox_id)
        runtime = self.runtimes.get(record.id)
        if runtime is None or record.state != "started":
            raise FakeDaytonaError(400, f"Sandbox {sandbox_id} is not started (state: {record.state})")
        return runtime

    def environment(self, sandbox_id: str, extra: dict[str, str] | None = None) -> dict[str, str]:
        record = self.sandbox(sandbox_id)
        return self.runtime(sandbox_id).fs.environment(record.env, extra)

    def new_session(self, sandbox_id: str, session_id: str) -> ShellSession:
        runtime = self.runtime(sandbox_id)
        if session_id in runtime.sessions:
            raise FakeDaytonaError(409, f"session {session_id} already exists", source="DAYTONA_DAEMON")
        session = ShellSession(session_id, runtime.fs, self.environment(sandbox_id), asyncio.get_running_loop())
        runtime.sessions[session_id] = session
        return session

    def close(self) -> None:
        for runtime in self.runtimes.values():
            runtime.close()
        self.runtimes.clear()


__all__ = ["HOME", "FakeState", "RecordedCall", "SandboxRuntime"]
