"""The `daytona` SDK (async client) behind a synchronous facade, with errors a user can act on.

Every SDK call runs on the backend's `LoopThread`. Failures become `DaytonaUnavailable` with a stable code and
the action to take (unreachable URL, bad key, missing snapshot, timeout), never a traceback. Sandboxes are
created from the configured snapshot, labelled so they can be found again, with the workspace volume mounted
(one subpath per workspace) at `/workspace`, and with the configured network policy and lifetimes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import aiohttp
from daytona import (
    AsyncDaytona,
    AsyncSandbox,
    CreateSandboxFromSnapshotParams,
    DaytonaConfig,
    ListSandboxesQuery,
    VolumeMount,
)
from daytona.common.errors import (
    DaytonaAuthenticationError,
    DaytonaConnectionError,
    DaytonaError,
    DaytonaForbiddenError,
    DaytonaNotFoundError,
    DaytonaTimeoutError,
)

from fleet_rlm.errors import FleetError, Unavailable
from fleet_rlm.sandbox.daytona.loop import LoopClosed, LoopThread
from fleet_rlm.sandbox.daytona.options import DaytonaOptions
from fleet_rlm.sandbox.roots import GUEST_ROOT, validate_workspace_id

T = TypeVar("T")
REUSABLE_STATES = ("started", "stopped", "archived")


class DaytonaUnavailable(Unavailable):
    code = "daytona_unavailable"


def state_name(state: Any) -> str:
    return str(getattr(state, "value", state)).lower()


def volume_subpath(workspace_id: str) -> str:
    return f"workspaces/{validate_workspace_id(workspace_id)}"


def translate(exc: BaseException, what: str, options: DaytonaOptions) -> FleetError:
    """One user-facing error for an SDK/network failure while doing `what`."""
    if isinstance(exc, FleetError):
        return exc
    detail = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    where = options.api_url or "the default Daytona API URL"
    if isinstance(exc, DaytonaAuthenticationError | DaytonaForbiddenError):
        return DaytonaUnavailable(
            f"Daytona rejected the API key while trying to {what}: {detail}",
            code="daytona_auth_failed",
        )
    if isinstance(exc, DaytonaConnectionError | aiohttp.ClientError | OSError):
        return DaytonaUnavailable(
            f"cannot reach the Daytona API at {where} to {what}: {detail}",
            code="daytona_unreachable",
            action="check DAYTONA_API_URL and that this host can reach it (proxy, firewall, VPN)",
        )
    if isinstance(exc, TimeoutError | DaytonaTimeoutError | asyncio.TimeoutError):
        return DaytonaUnavailable(
            f"Daytona did not answer in time while trying to {what}: {detail}",
            code="daytona_timeout",
            action="retry; if it persists check the Daytona status page or raise the timeout",
        )
    if isinstance(exc, DaytonaNotFoundError) and "snapshot" in detail.lower():
        return DaytonaUnavailable(
            f"the Daytona snapshot {options.snapshot!r} does not exist: {detail}",
            code="daytona_snapshot_missing",
            action="run `fleet-rlm daytona-snapshot` (or set FLEET_DAYTONA_SNAPSHOT to an existing snapshot)",
        )
    if isinstance(exc, LoopClosed):
        return DaytonaUnavailable(str(exc), code="daytona_closed", action="create a new Daytona backend")
    if isinstance(exc, DaytonaError) and "api key" in detail.lower():
        return DaytonaUnavailable(
            f"Daytona is not configured: {detail}",
            code="daytona_not_configured",
            action="set DAYTONA_API_KEY and DAYTONA_API_URL (or FLEET_DAYTONA_API_KEY / FLEET_DAYTONA_API_URL)",
        )
    return DaytonaUnavailable(
        f"Daytona failed to {what}: {detail}",
        code="daytona_error",
        action="see the message; run `fleet-rlm daytona-smoke` to check the setup step by step",
    )


class DaytonaClient:
    """Synchronous facade over `AsyncDaytona` (one per backend, living on the backend's loop)."""

    def __init__(self, options: DaytonaOptions, loop: LoopThread | None = None) -> None:
        self.options = options
        self.loop = loop or LoopThread()
        self._sdk: AsyncDaytona | None = None
        self._volume_id: str | None = None
        self.loop.submit(self.sdk())  # build the SDK client now: it loads TLS certificates (~0.3 s)

    # --- plumbing ------------------------------------------------------------------------------------------
    async def sdk(self) -> AsyncDaytona:
        if self._sdk is None:
            config = DaytonaConfig(
                api_key=self.options.api_key, api_url=self.options.api_url, target=self.options.target
            )
            self._sdk = AsyncDaytona(config)
        return self._sdk

    def call(self, what: str, fn: Callable[[AsyncDaytona], Awaitable[T]], timeout: float | None = None) -> T:
        """Run `fn(sdk)` on the loop; any failure becomes a `DaytonaUnavailable` about `what`."""

        async def run() -> T:
            return await fn(await self.sdk())

        try:
            return self.loop.run(run(), timeout or self.options.request_timeout_s)
        except Exception as exc:
            raise translate(exc, what, self.options) from exc

    def close(self) -> None:
        sdk, self._sdk = self._sdk, None
        if sdk is not None and not self.loop.closed:
            try:
                self.loop.run(sdk.close(), 10)
            except Exception:  # closing a client whose server is gone must not fail shutdown
                pass
        self.loop.close()

    # --- volume --------------------------------------------------------------------------------------------
    async def _ensure_volume(self, sdk: AsyncDaytona) -> str:
        if self._volume_id is not None:
            return self._volume_id
        volume = await sdk.volume.get(self.options.volume, create=True)
        deadline = time.monotonic() + self.options.create_timeout_s
        while state_name(volume.state) != "ready":
            if "error" in state_name(volume.state) or time.monotonic() > deadline:
                raise DaytonaUnavailable(
                    f"the Daytona volume {self.options.volume!r} is {volume.state}",
                    code="daytona_volume_unavailable",
                    action="check the volume in the Daytona dashboard or set FLEET_DAYTONA_VOLUME to another",
                )
            await asyncio.sleep(0.5)
            volume = await sdk.volume.get(self.options.volume)
        self._volume_id = volume.id
        return volume.id

    def ensure_volume(self) -> str:
        return self.call(f"open the volume {self.options.volume!r}", self._ensure_volume)

    # --- sandboxes -----------------------------------------------------------------------------------------
    def create_sandbox(self, labels: dict[str, str], workspace_id: str) -> AsyncSandbox:
        options = self.options

        async def create(sdk: AsyncDaytona) -> AsyncSandbox:
            volume_id = await self._ensure_volume(sdk)
            mount = VolumeMount(volume_id=volume_id, mount_path=GUEST_ROOT, subpath=volume_subpath(workspace_id))
            params = CreateSandboxFromSnapshotParams(
                snapshot=options.snapshot,
                labels=labels,
                env_vars={"WORKSPACE_ROOT": GUEST_ROOT, "PYTHONDONTWRITEBYTECODE": "1"},
                volumes=[mount],
                auto_stop_interval=options.auto_stop_minutes,
                auto_delete_interval=options.auto_delete_minutes,
                **options.network,
            )
            return await sdk.create(params, timeout=options.create_timeout_s)

        return self.call("create a sandbox", create, timeout=options.create_timeout_s + 10)

    def find_sandbox(self, labels: dict[str, str]) -> AsyncSandbox | None:
        """A started (or restartable) sandbox carrying all `labels`, started if needed; None if there is none."""
        options = self.options

        async def find(sdk: AsyncDaytona) -> AsyncSandbox | None:
            candidates = [s async for s in sdk.list(ListSandboxesQuery(labels=labels))]
            candidates.sort(key=lambda s: state_name(s.state) != "started")  # a running one first
            for sandbox in candidates:
                state = state_name(sandbox.state)
                if state not in REUSABLE_STATES:
                    continue
                if state != "started":
                    await sandbox.start(timeout=options.create_timeout_s)
                return sandbox
            return None

        return self.call("look up sandboxes by label", find, timeout=options.create_timeout_s + 10)

    def delete_sandbox(self, sandbox: AsyncSandbox) -> None:
        self.call(f"delete sandbox {sandbox.id}", lambda _sdk: sandbox.delete(timeout=self.options.request_timeout_s))

    def list_sandboxes(self, labels: dict[str, str]) -> list[AsyncSandbox]:
        async def listing(sdk: AsyncDaytona) -> list[AsyncSandbox]:
            return [s async for s in sdk.list(ListSandboxesQuery(labels=labels))]

        return self.call("list sandboxes", listing)

    def run_in_sandbox(self, sandbox: AsyncSandbox, what: str, fn: Callable[[AsyncSandbox], Awaitable[T]]) -> T:
        """Run a toolbox operation on `sandbox` (exec, fs, git, sessions) with the same error translation."""
        return self.call(what, lambda _sdk: fn(sandbox))


def describe_sandbox(sandbox: Any) -> str:
    return f"{getattr(sandbox, 'id', '?')} ({getattr(sandbox, 'state', '?')})"
