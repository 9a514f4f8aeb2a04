"""`daytona-smoke`: check a Daytona setup end to end, one green/red step at a time, each red with its action.

Steps: configuration, API reachable (and key accepted), snapshot present, volume ready, create a sandbox,
run code through the real worker (including one host callback), clone a repository (when given), write and
read the workspace volume, delete the sandbox. The first failing prerequisite stops the run; the sandbox is
always deleted. Nothing raises: every failure is a red `StepResult` with the action to take.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daytona import AsyncDaytona, AsyncSandbox

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.sandbox.daytona.client import DaytonaClient, state_name, translate
from fleet_rlm.sandbox.daytona.options import BAKED_DIR, LABEL_APP, DaytonaOptions
from fleet_rlm.sandbox.daytona.remote import ensure_worker_files, start_worker
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.roots import GUEST_ROOT
from fleet_rlm.sandbox.session import WorkerLost, WorkerSession

SMOKE_WORKSPACE = "fleet-smoke"


@dataclass(frozen=True)
class StepResult:
    name: str
    ok: bool
    detail: str
    action: str | None = None


class _Stop(Exception):
    """A prerequisite failed; later steps cannot run."""


class _Smoke:
    def __init__(self, options: DaytonaOptions) -> None:
        self.options = options
        self.steps: list[StepResult] = []
        self.client: DaytonaClient | None = None
        self.sandbox: AsyncSandbox | None = None

    def step(self, name: str, fn: Callable[[], str], *, required: bool = True) -> bool:
        started = time.monotonic()
        try:
            detail = fn()
        except FleetError as exc:
            self.steps.append(StepResult(name, False, f"[{exc.code}] {exc.message}", exc.action))
        except WorkerLost as exc:
            action = "check the snapshot has python3 (`fleet-rlm daytona-snapshot --refresh`)"
            self.steps.append(StepResult(name, False, f"the worker failed: {exc.reason}", action))
        except Exception as exc:  # anything else is still a red step, never a traceback
            error = translate(exc, name, self.options)
            self.steps.append(StepResult(name, False, f"[{error.code}] {error.message}", error.action))
        else:
            elapsed = (time.monotonic() - started) * 1000
            self.steps.append(StepResult(name, True, f"{detail} ({elapsed:.0f} ms)"))
            return True
        if required:
            raise _Stop
        return False

    @property
    def live(self) -> DaytonaClient:
        assert self.client is not None
        return self.client

    def in_sandbox(self, what: str, fn: Callable[[AsyncSandbox], Any]) -> Any:
        assert self.sandbox is not None
        return self.live.run_in_sandbox(self.sandbox, what, fn)

    # --- steps ---------------------------------------------------------------------------------------------
    def configuration(self) -> str:
        missing = [
            name
            for name, value in (("DAYTONA_API_KEY", self.options.api_key), ("DAYTONA_API_URL", self.options.api_url))
            if not value
        ]
        if missing:
            raise FleetError(
                f"{' and '.join(missing)} not set",
                code="daytona_not_configured",
            )
        self.client = DaytonaClient(self.options)
        return f"API {self.options.api_url}, snapshot {self.options.snapshot!r}, volume {self.options.volume!r}"

    def connect(self) -> str:
        async def probe(sdk: AsyncDaytona) -> int:
            return len((await sdk.snapshot.list(limit=1)).items)

        self.live.call("list snapshots", probe)
        return "API reachable, key accepted"

    def snapshot(self) -> str:
        async def get(sdk: AsyncDaytona) -> str:
            return state_name((await sdk.snapshot.get(self.options.snapshot)).state)

        state = self.live.call(f"find the snapshot {self.options.snapshot!r}", get)
        if state != "active":
            raise FleetError(
                f"snapshot {self.options.snapshot!r} is {state}",
                code="daytona_snapshot_not_active",
                action="wait for the build to finish or run `fleet-rlm daytona-snapshot --refresh`",
            )
        return f"snapshot {self.options.snapshot!r} is active"

    def volume(self) -> str:
        volume_id = self.live.ensure_volume()
        return f"volume {self.options.volume!r} ready ({volume_id})"

    def create(self) -> str:
        labels = {LABEL_APP: "1", "role": "smoke", "workspace": SMOKE_WORKSPACE}
        self.sandbox = self.live.create_sandbox(labels, SMOKE_WORKSPACE)
        return f"sandbox {self.sandbox.id} started"

    def execute(self) -> str:
        assert self.sandbox is not None
        sandbox = self.sandbox
        worker_dir = ensure_worker_files(self.live, sandbox)
        how = (
            "baked into the snapshot"
            if worker_dir.startswith(BAKED_DIR)
            else "uploaded (the snapshot lacks this worker version; `fleet-rlm daytona-snapshot --refresh` bakes it in)"
        )
        options = SandboxOptions(data_dir=Path("."), workspace_id=SMOKE_WORKSPACE, startup_timeout_s=60)
        session = WorkerSession(
            options, SMOKE_WORKSPACE, spawn=lambda o, _w: start_worker(self.live, sandbox, worker_dir, o)
        )
        try:
            session.wait_ready()
            replies: list[dict[str, Any]] = []

            def answer(frame: Any) -> None:
                replies.append(frame.header)
                session.send({"t": "reply", "id": frame.header.get("id"), "ok": True, "value": "pong"})

            code = "import platform\nprint(6 * 7, ping(), platform.python_version())"
            result = session.run_cell(code, {}, tools=["ping"], output_fields=None, on_call=answer, timeout_s=60)
        finally:
            session.close()
        if result.kind != "ok" or not result.output.startswith("42 pong"):
            raise FleetError(
                f"the worker ran the cell but returned {result.kind}: {result.output or result.header.get('error')}",
                code="daytona_worker_broken",
                action="rebuild the snapshot with `fleet-rlm daytona-snapshot --refresh`",
            )
        python = result.output.split()[-1]
        return f"worker {how}; cell and host callback ok (Python {python})"

    def clone(self, repo: str, ref: str | None) -> str:
        path = f"/tmp/fleet-smoke-{uuid.uuid4().hex[:8]}"
        is_commit = bool(ref) and len(ref or "") >= 7 and all(c in "0123456789abcdef" for c in (ref or "").lower())

        async def clone(sb: AsyncSandbox) -> int:
            await sb.git.clone(
                url=repo, path=path, branch=None if is_commit else ref, commit_id=ref if is_commit else None
            )
            return len(await sb.fs.list_files(path))

        try:
            entries = self.in_sandbox(f"clone {repo}", clone)
        except FleetError as exc:
            exc.action = "check the repository URL and ref, and that the sandbox network policy allows the host"
            raise
        return f"cloned {repo}{'@' + ref if ref else ''} ({entries} top-level entries)"

    def volume_roundtrip(self) -> str:
        name = f"{GUEST_ROOT}/meta/.smoke-{uuid.uuid4().hex[:8]}"
        payload = f"fleet-rlm smoke {time.time()}".encode()

        async def roundtrip(sb: AsyncSandbox) -> bytes:
            await sb.fs.create_folder(f"{GUEST_ROOT}/meta", "755")
            await sb.fs.upload_file(payload, name)
            data = await sb.fs.download_file(name)
            await sb.fs.delete_file(name)
            return bytes(data)

        if self.in_sandbox("write and read the volume", roundtrip) != payload:
            raise FleetError(
                "the volume returned different bytes than were written",
                code="daytona_volume_mismatch",
                action="check the volume in the Daytona dashboard; try another FLEET_DAYTONA_VOLUME",
            )
        return f"wrote and read back {len(payload)} bytes under {GUEST_ROOT}/meta on volume {self.options.volume!r}"

    def delete(self) -> str:
        sandbox, self.sandbox = self.sandbox, None
        assert sandbox is not None
        self.live.delete_sandbox(sandbox)
        return f"sandbox {sandbox.id} deleted"


def run_smoke(
    settings: Settings, repo: str | None = None, ref: str | None = None, *, options: DaytonaOptions | None = None
) -> list[StepResult]:
    """Run every check in order; returns the steps (all green = the setup works)."""
    smoke = _Smoke(options or DaytonaOptions.from_settings(settings))
    try:
        smoke.step("configuration", smoke.configuration)
        smoke.step("connect", smoke.connect)
        smoke.step("snapshot", smoke.snapshot)
        smoke.step("volume", smoke.volume)
        smoke.step("create sandbox", smoke.create)
        smoke.step("execute code", smoke.execute, required=False)
        if repo:
            smoke.step("clone repository", lambda: smoke.clone(repo, ref), required=False)
        smoke.step("volume write/read", smoke.volume_roundtrip, required=False)
        smoke.step("delete sandbox", smoke.delete, required=False)
    except _Stop:
        pass
    finally:
        if smoke.sandbox is not None and smoke.client is not None:
            try:
                smoke.live.delete_sandbox(smoke.sandbox)
            except FleetError:
                pass
        if smoke.client is not None:
            smoke.client.close()
    return smoke.steps
