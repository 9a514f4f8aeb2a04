"""Fake Daytona server: sync SDK client, out-of-process CLI, timeouts, log framing and auth on the toolbox."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from daytona import (
    AsyncDaytona,
    CreateSandboxFromImageParams,
    CreateSandboxFromSnapshotParams,
    CreateSnapshotParams,
    Daytona,
    DaytonaConfig,
    DaytonaTimeoutError,
    Image,
    Resources,
    SessionExecuteRequest,
    VolumeMount,
)

from fleet_rlm.testing.fake_daytona import FakeDaytonaServer

SNAPSHOT = "daytonaio/sandbox:latest"


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeDaytonaServer]:
    with FakeDaytonaServer(root=tmp_path / "fake") as server:
        yield server


@pytest.fixture
async def daytona(fake: FakeDaytonaServer) -> AsyncIterator[AsyncDaytona]:
    async with AsyncDaytona(DaytonaConfig(api_key=fake.api_key, api_url=fake.api_url, target="us")) as client:
        yield client


def test_sync_client_round_trip(fake: FakeDaytonaServer) -> None:
    daytona = Daytona(DaytonaConfig(api_key=fake.api_key, api_url=fake.api_url, target="us"))
    volume = daytona.volume.get("sync-vol", create=True)
    mount = VolumeMount(volume_id=volume.id, mount_path="/data", subpath="p")
    sandbox = daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT, labels={"k": "v"}, volumes=[mount]))

    assert sandbox.process.exec("echo hi > /data/f && cat /data/f").result == "hi\n"
    sandbox.fs.upload_file(b"abc", "/workspace/z.txt")
    assert sandbox.fs.download_file("/workspace/z.txt") == b"abc"
    context = sandbox.code_interpreter.create_context()
    sandbox.code_interpreter.run_code("a = 5", context=context)
    assert sandbox.code_interpreter.run_code("print(a * 2)", context=context).stdout == "10\n"
    assert [s.id for s in daytona.list()] == [sandbox.id]
    sandbox.stop()
    sandbox.start()
    daytona.delete(sandbox)
    assert (fake.root / "volumes" / "sync-vol" / "p" / "f").read_text() == "hi\n"


def test_cli_serves_out_of_process(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "fleet_rlm.testing.fake_daytona", "--api-key", "cli-key", "--root", str(tmp_path)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        api_url = proc.stdout.readline().strip().removeprefix("DAYTONA_API_URL=")
        assert proc.stdout.readline().strip() == "DAYTONA_API_KEY=cli-key"
        daytona = Daytona(DaytonaConfig(api_key="cli-key", api_url=api_url, target="us"))
        sandbox = daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT))
        assert sandbox.process.exec("echo out-of-process").result == "out-of-process\n"
        daytona.delete(sandbox)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


async def test_interpreter_timeout_interrupts_but_keeps_state(daytona: AsyncDaytona) -> None:
    sandbox = await daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT))
    context = await sandbox.code_interpreter.create_context()
    await sandbox.code_interpreter.run_code("kept = 'yes'", context=context)
    with pytest.raises(DaytonaTimeoutError):
        await sandbox.code_interpreter.run_code("import time\nwhile True: time.sleep(0.05)", context=context, timeout=1)
    after = await sandbox.code_interpreter.run_code("print(kept)", context=context)
    assert after.stdout == "yes\n"


async def test_session_log_framing_partial_lines_and_large_output(daytona: AsyncDaytona) -> None:
    sandbox = await daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT))
    await sandbox.process.create_session("frames")
    command = "python3 -c \"import sys; print('x' * 200000); sys.stderr.write('partial')\""
    started = await sandbox.process.execute_session_command(
        "frames", SessionExecuteRequest(command=command, run_async=True)
    )
    out: list[str] = []
    err: list[str] = []
    follow = sandbox.process.get_session_command_logs_async
    await asyncio.wait_for(follow("frames", started.cmd_id, out.append, err.append), 15)
    assert "".join(out) == "x" * 200000 + "\n"
    assert "".join(err) == "partial\n"

    sync = await sandbox.process.execute_session_command("frames", SessionExecuteRequest(command="echo a; false"))
    assert (sync.exit_code, sync.output, sync.stdout) == (1, "a\n", "a\n")
    session = await sandbox.process.get_session("frames")
    assert [c.exit_code for c in session.commands] == [0, 1]


async def test_toolbox_requires_the_api_key_and_errors_are_json(fake: FakeDaytonaServer, daytona: AsyncDaytona) -> None:
    sandbox = await daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT))
    url = f"{fake.base_url}/toolbox/{sandbox.id}/files?path=/home/daytona"
    async with httpx.AsyncClient() as client:
        denied = await client.get(url, headers={"Authorization": "Bearer nope"})
        missing = await client.get(
            f"{fake.base_url}/toolbox/{sandbox.id}/files/info?path=/nope",
            headers={"Authorization": f"Bearer {fake.api_key}"},
        )
    assert denied.status_code == 401
    assert denied.json()["statusCode"] == 401
    assert missing.status_code == 404
    assert missing.json()["code"] == "FILE_NOT_FOUND"
    assert [(c.method, c.status) for c in fake.calls[-2:]] == [("GET", 401), ("GET", 404)]


async def test_image_sandbox_resources_and_declarative_snapshot(fake: FakeDaytonaServer, daytona: AsyncDaytona) -> None:
    image = Image.debian_slim("3.11").pip_install(["numpy"])
    snapshot = await daytona.snapshot.create(CreateSnapshotParams(name="declarative", image=image))
    assert snapshot.state == "active"
    assert "numpy" in (fake.state.snapshot("declarative").dockerfile or "")

    params = CreateSandboxFromImageParams(image="python:3.11-slim", resources=Resources(cpu=2, memory=4, disk=8))
    sandbox = await daytona.create(params)
    assert (sandbox.cpu, sandbox.memory, sandbox.disk, sandbox.state) == (2, 4, 8, "started")
    assert (await sandbox.process.exec("echo ready")).result == "ready\n"


def test_reduced_mode_without_bubblewrap_rewrites_guest_paths(tmp_path: Path) -> None:
    with FakeDaytonaServer(root=tmp_path / "fake", use_bwrap=False) as fake:
        daytona = Daytona(DaytonaConfig(api_key=fake.api_key, api_url=fake.api_url, target="us"))
        volume = daytona.volume.get("v", create=True)
        mount = VolumeMount(volume_id=volume.id, mount_path="/mnt/state", subpath="x")
        sandbox = daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT, volumes=[mount]))
        assert sandbox.process.exec("echo hi > /mnt/state/f && cat /mnt/state/f").result == "hi\n"
        sandbox.fs.upload_file(b"print('w')", "/home/daytona/w.py")
        sandbox.process.create_session("s")
        run = sandbox.process.execute_session_command("s", SessionExecuteRequest(command="python3 /home/daytona/w.py"))
        assert (run.exit_code, run.stdout) == (0, "w\n")
        assert (fake.root / "volumes" / "v" / "x" / "f").read_text() == "hi\n"
