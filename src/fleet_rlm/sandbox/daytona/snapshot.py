"""`daytona-snapshot`: build the Daytona snapshot sandboxes start from, with the worker baked in.

The image is declarative (`daytona.Image`): Debian slim with the project's Python, plus this exact worker
version at /opt/fleet-rlm/<version>/ (written by RUN steps from base64, so no build context has to be
uploaded) and an import check so a broken worker fails the build, not the first session. Sandboxes find the
worker by version; a snapshot built from an older worker still works (the files are then uploaded at start)
until it is refreshed with `refresh=True`.
"""

from __future__ import annotations

import asyncio
import base64
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass

from daytona import AsyncDaytona, CreateSnapshotParams, Image
from daytona.common.errors import DaytonaNotFoundError

from fleet_rlm.config import Settings
from fleet_rlm.sandbox.daytona.client import DaytonaClient, DaytonaUnavailable, state_name
from fleet_rlm.sandbox.daytona.options import BAKED_DIR, DaytonaOptions, worker_sources, worker_version

PYTHON_SERIES = "3.11"
BUILD_TIMEOUT_S = 1800.0


@dataclass(frozen=True)
class SnapshotResult:
    name: str
    created: bool  # False: it already existed and was kept (no refresh asked)
    state: str
    worker_version: str
    detail: str


def worker_image(python_series: str = PYTHON_SERIES) -> Image:
    """The snapshot's image: Python + the worker files of this version + an import check."""
    target = f"{BAKED_DIR}/{worker_version()}"
    commands = [f"mkdir -p {shlex.quote(target)}"]
    for name, data in sorted(worker_sources().items()):
        encoded = base64.b64encode(data).decode("ascii")
        commands.append(f"echo {encoded} | base64 -d > {shlex.quote(f'{target}/{name}')}")
    check = f"import sys; sys.path.insert(0, {target!r}); import worker, worker_lines"
    commands += [f"chmod -R a+rX {BAKED_DIR}", f"python3 -I -B -c {shlex.quote(check)}", "mkdir -p /workspace"]
    return Image.debian_slim(python_series).run_commands(*commands).env({"PYTHONDONTWRITEBYTECODE": "1"})  # type: ignore[arg-type]


async def _existing(sdk: AsyncDaytona, name: str) -> str | None:
    try:
        return state_name((await sdk.snapshot.get(name)).state)
    except DaytonaNotFoundError:
        return None


async def _delete_and_wait(sdk: AsyncDaytona, name: str, timeout_s: float = 120.0) -> None:
    await sdk.snapshot.delete(await sdk.snapshot.get(name))
    deadline = time.monotonic() + timeout_s
    while await _existing(sdk, name) is not None:
        if time.monotonic() > deadline:
            raise DaytonaUnavailable(
                f"the old snapshot {name!r} is still being removed",
                code="daytona_snapshot_busy",
                action="wait a minute and run `fleet-rlm daytona-snapshot --refresh` again",
            )
        await asyncio.sleep(1.0)


def build_snapshot(
    settings: Settings,
    refresh: bool = False,
    *,
    options: DaytonaOptions | None = None,
    on_logs: Callable[[str], None] | None = None,
) -> SnapshotResult:
    """Create the snapshot `settings.daytona_snapshot` (rebuild it with `refresh`). Raises `DaytonaUnavailable`."""
    opts = options or DaytonaOptions.from_settings(settings)
    name, version = opts.snapshot, worker_version()
    client = DaytonaClient(opts)
    try:
        state = client.call(f"look up the snapshot {name!r}", lambda sdk: _existing(sdk, name))
        if state is not None and not refresh:
            detail = f"snapshot {name!r} already exists ({state}); pass refresh to rebuild it with worker {version}"
            return SnapshotResult(name, False, state, version, detail)
        if state is not None:
            client.call(f"delete the old snapshot {name!r}", lambda sdk: _delete_and_wait(sdk, name), timeout=150)

        async def create(sdk: AsyncDaytona) -> str:
            params = CreateSnapshotParams(name=name, image=worker_image())
            snapshot = await sdk.snapshot.create(params, on_logs=on_logs, timeout=BUILD_TIMEOUT_S)
            return state_name(snapshot.state)

        state = client.call(f"build the snapshot {name!r}", create, timeout=BUILD_TIMEOUT_S + 30)
        verb = "rebuilt" if refresh else "built"
        return SnapshotResult(name, True, state, version, f"snapshot {name!r} {verb} with worker {version} ({state})")
    finally:
        client.close()
