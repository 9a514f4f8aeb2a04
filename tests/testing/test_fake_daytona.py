"""The real `daytona` SDK (async client) against the fake Daytona server: control plane and toolbox."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from daytona import (
    AsyncDaytona,
    CodeRunParams,
    CreateSandboxFromSnapshotParams,
    CreateSnapshotParams,
    DaytonaAuthenticationError,
    DaytonaConfig,
    DaytonaNotFoundError,
    FileUpload,
    ListSandboxesQuery,
    SessionExecuteRequest,
    VolumeMount,
)

from fleet_rlm.testing.fake_daytona import FakeDaytonaServer
from fleet_rlm.testing.fake_daytona.fsmap import bwrap_available

# Without bubblewrap the fake runs commands with host paths (cwd is the mapped host dir), so exact guest cwd
# checks only hold in a mount namespace.
requires_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap not usable here")

SNAPSHOT = "fleet-test-snapshot"

ECHO_WORKER = """
import sys
for line in sys.stdin:
    line = line.rstrip("\\n")
    if line == "quit":
        break
    print("echo:" + line, flush=True)
    print("note:" + line, file=sys.stderr, flush=True)
print("bye", flush=True)
"""


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeDaytonaServer]:
    with FakeDaytonaServer(root=tmp_path / "fake", snapshots=(SNAPSHOT,)) as server:
        yield server


@pytest.fixture
async def daytona(fake: FakeDaytonaServer) -> AsyncIterator[AsyncDaytona]:
    client = AsyncDaytona(DaytonaConfig(api_key=fake.api_key, api_url=fake.api_url, target="us"))
    try:
        yield client
    finally:
        await client.close()


async def test_create_from_snapshot_with_labels_and_volume_then_find_by_labels(
    fake: FakeDaytonaServer, daytona: AsyncDaytona
) -> None:
    volume = await daytona.volume.get("fleet-data", create=True)
    params = CreateSandboxFromSnapshotParams(
        snapshot=SNAPSHOT,
        labels={"fleet.session": "s-1", "fleet.owner": "alice"},
        env_vars={"FLEET_MODE": "test"},
        volumes=[VolumeMount(volume_id=volume.id, mount_path="/home/daytona/data", subpath="users/alice")],
        network_block_all=True,
        auto_stop_interval=30,
        auto_archive_interval=60,
        auto_delete_interval=120,
    )
    sandbox = await daytona.create(params)

    assert sandbox.state == "started"
    assert sandbox.snapshot == SNAPSHOT
    assert sandbox.labels["fleet.session"] == "s-1"
    assert sandbox.network_block_all is True
    intervals = (sandbox.auto_stop_interval, sandbox.auto_archive_interval, sandbox.auto_delete_interval)
    assert intervals == (30, 60, 120)
    assert sandbox.volumes is not None and sandbox.volumes[0].subpath == "users/alice"
    create_call = next(c for c in fake.calls if c.method == "POST" and c.path == "/api/sandbox")
    assert create_call.body["env"] == {"FLEET_MODE": "test"}

    found = [s async for s in daytona.list(ListSandboxesQuery(labels={"fleet.session": "s-1"}))]
    assert [s.id for s in found] == [sandbox.id]
    assert [s async for s in daytona.list(ListSandboxesQuery(labels={"fleet.session": "other"}))] == []
    again = await daytona.get(sandbox.id)
    assert again.env == {"FLEET_MODE": "test"}

    await sandbox.set_labels({"fleet.session": "s-2"})
    assert (await daytona.get(sandbox.id)).labels == {"fleet.session": "s-2"}


@requires_bwrap
async def test_exec_code_run_env_and_guest_paths(daytona: AsyncDaytona) -> None:
    params = CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT, env_vars={"GREETING": "hi"})
    sandbox = await daytona.create(params)

    result = await sandbox.process.exec("echo $GREETING; pwd; echo oops >&2; exit 3")
    assert result.exit_code == 3
    assert result.result.splitlines() == ["hi", "/home/daytona", "oops"]

    listing = await sandbox.process.exec("mkdir -p /workspace/x && touch /workspace/x/f && ls /workspace/x")
    assert listing.result.strip() == "f"
    assert (await sandbox.fs.get_file_info("/workspace/x/f")).is_dir is False

    code = "import os, sys; print(sys.argv[1:], os.environ['EXTRA'])"
    run_params = CodeRunParams(argv=["a1"], env={"EXTRA": "e1"})
    ran = await sandbox.process.code_run(code, params=run_params, timeout=30)
    assert (ran.exit_code, ran.result) == (0, "['a1'] e1\n")
    with_env = await sandbox.process.exec("echo $EXTRA", env={"EXTRA": "x1"})
    assert with_env.result.strip() == "x1"


async def test_session_command_stdin_and_streamed_logs_round_trip(daytona: AsyncDaytona) -> None:
    sandbox = await daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT))
    await sandbox.fs.upload_file(ECHO_WORKER.encode(), "/home/daytona/echo_worker.py")
    await sandbox.process.create_session("worker")
    request = SessionExecuteRequest(
        command="python3 /home/daytona/echo_worker.py", run_async=True, suppress_input_echo=True
    )
    started = await sandbox.process.execute_session_command("worker", request)
    stdout: asyncio.Queue[str] = asyncio.Queue()
    stderr: list[str] = []
    follow = sandbox.process.get_session_command_logs_async
    follower = asyncio.create_task(follow("worker", started.cmd_id, stdout.put_nowait, stderr.append))

    for word in ("alpha", "beta", "gamma"):
        await sandbox.process.send_session_command_input("worker", started.cmd_id, word)
        assert await asyncio.wait_for(stdout.get(), 10) == f"echo:{word}\n"

    await sandbox.process.send_session_command_input("worker", started.cmd_id, "quit")
    await asyncio.wait_for(follower, 10)
    assert await stdout.get() == "bye\n"
    assert "".join(stderr) == "note:alpha\nnote:beta\nnote:gamma\n"

    command = await sandbox.process.get_session_command("worker", started.cmd_id)
    assert command.exit_code == 0
    logs = await sandbox.process.get_session_command_logs("worker", started.cmd_id)
    assert logs.stdout == "echo:alpha\necho:beta\necho:gamma\nbye\n"


@requires_bwrap
async def test_session_shell_state_persists_and_input_is_echoed_by_default(daytona: AsyncDaytona) -> None:
    sandbox = await daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT))
    await sandbox.process.create_session("shell")
    run = sandbox.process.execute_session_command
    await run("shell", SessionExecuteRequest(command="cd /tmp && export V=7"))
    where = await run("shell", SessionExecuteRequest(command="echo $V $(pwd)"))
    assert (where.exit_code, where.stdout) == (0, "7 /tmp\n")

    reader = await run("shell", SessionExecuteRequest(command="read x; echo got-$x", run_async=True))
    await sandbox.process.send_session_command_input("shell", reader.cmd_id, "v1")
    for _ in range(200):
        if (await sandbox.process.get_session_command("shell", reader.cmd_id)).exit_code is not None:
            break
        await asyncio.sleep(0.02)
    logs = await sandbox.process.get_session_command_logs("shell", reader.cmd_id)
    assert logs.stdout == "v1\ngot-v1\n"
    with pytest.raises(Exception, match="already completed"):
        await sandbox.process.send_session_command_input("shell", reader.cmd_id, "late")


@requires_bwrap
async def test_code_interpreter_keeps_state_per_context(daytona: AsyncDaytona) -> None:
    sandbox = await daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT))
    first = await sandbox.code_interpreter.create_context()
    second = await sandbox.code_interpreter.create_context(cwd="/tmp")

    streamed: list[str] = []
    await sandbox.code_interpreter.run_code("counter = 41", context=first)
    code = "counter += 1\nprint('counter', counter)"
    run = sandbox.code_interpreter.run_code
    result = await run(code, context=first, on_stdout=lambda m: streamed.append(m.output))
    assert result.stdout == "counter 42\n"
    assert "".join(streamed) == "counter 42\n"

    code = "import os; print(os.getcwd()); counter"
    isolated = await sandbox.code_interpreter.run_code(code, context=second)
    assert isolated.stdout == "/tmp\n"
    assert isolated.error is not None and isolated.error.name == "NameError"

    default = await sandbox.code_interpreter.run_code("import sys; print('x', file=sys.stderr)")
    assert default.stderr == "x\n"
    assert [c.id for c in await sandbox.code_interpreter.list_contexts()] == [first.id, second.id]
    await sandbox.code_interpreter.delete_context(second)
    assert [c.id for c in await sandbox.code_interpreter.list_contexts()] == [first.id]


async def test_fs_upload_download_list_and_delete(daytona: AsyncDaytona, tmp_path: Path) -> None:
    sandbox = await daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT))
    local = tmp_path / "local.bin"
    local.write_bytes(bytes(range(256)) * 100)
    await sandbox.fs.create_folder("/workspace/in", "755")
    await sandbox.fs.upload_files(
        [FileUpload(b"hello", "/workspace/in/a.txt"), FileUpload(str(local), "/workspace/in/b.bin")]
    )
    await sandbox.fs.upload_file(b"relative", "notes/r.txt")

    assert await sandbox.fs.download_file("/workspace/in/a.txt") == b"hello"
    assert await sandbox.fs.download_file("/workspace/in/b.bin") == local.read_bytes()
    assert await sandbox.fs.download_file("/home/daytona/notes/r.txt") == b"relative"
    names = sorted(f.name for f in await sandbox.fs.list_files("/workspace/in"))
    assert names == ["a.txt", "b.bin"]
    matches = await sandbox.fs.find_files("/workspace", "hell")
    assert [(m.file, m.line) for m in matches] == [("/workspace/in/a.txt", 1)]

    await sandbox.fs.delete_file("/workspace/in/a.txt")
    with pytest.raises(DaytonaNotFoundError):
        await sandbox.fs.download_file("/workspace/in/a.txt")


async def test_git_clone_local_repository(daytona: AsyncDaytona, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(repo)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    for i in range(3):
        (repo / "README.md").write_text(f"version {i}\n")
        subprocess.run([*git, "add", "README.md"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", f"c{i}"], check=True)

    sandbox = await daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT))
    await sandbox.git.clone(url=repo.as_uri(), path="/workspace/repo", branch="main")
    assert await sandbox.fs.download_file("/workspace/repo/README.md") == b"version 2\n"
    count = await sandbox.process.exec("git rev-list --count HEAD", cwd="/workspace/repo")
    assert count.result.strip() == "3"

    await sandbox.git.clone(url=repo.as_uri(), path="shallow", depth=1)
    shallow = await sandbox.process.exec("git rev-list --count HEAD", cwd="/home/daytona/shallow")
    assert shallow.result.strip() == "1"


async def test_volume_subpath_persists_across_sandbox_delete(daytona: AsyncDaytona) -> None:
    volume = await daytona.volume.get("shared", create=True)
    mount = [VolumeMount(volume_id=volume.id, mount_path="/mnt/state", subpath="tenant-a")]
    first = await daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT, volumes=mount))
    await first.process.exec("echo kept > /mnt/state/memo.txt")
    await daytona.delete(first)
    with pytest.raises(DaytonaNotFoundError):
        await daytona.get(first.id)

    second = await daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT, volumes=mount))
    assert await second.fs.download_file("/mnt/state/memo.txt") == b"kept\n"
    other = [VolumeMount(volume_id="shared", mount_path="/mnt/state", subpath="tenant-b")]
    third = await daytona.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT, volumes=other))
    assert (await third.process.exec("ls /mnt/state")).result == ""
    assert [v.name for v in await daytona.volume.list()] == ["shared"]


async def test_stop_start_and_snapshots(daytona: AsyncDaytona) -> None:
    created = await daytona.snapshot.create(CreateSnapshotParams(name="py311", image="python:3.11-slim"))
    assert created.state == "active"
    assert (await daytona.snapshot.get("py311")).id == created.id
    assert {s.name for s in (await daytona.snapshot.list()).items} == {SNAPSHOT, "py311"}

    sandbox = await daytona.create(CreateSandboxFromSnapshotParams(snapshot="py311"))
    await sandbox.fs.upload_file(b"x", "/home/daytona/keep.txt")
    await sandbox.stop()
    assert sandbox.state == "stopped"
    await sandbox.start()
    assert sandbox.state == "started"
    assert await sandbox.fs.download_file("/home/daytona/keep.txt") == b"x"
    await sandbox.delete()

    await daytona.snapshot.delete(created)
    with pytest.raises(DaytonaNotFoundError):
        await daytona.snapshot.get("py311")
    with pytest.raises(DaytonaNotFoundError):
        await daytona.create(CreateSandboxFromSnapshotParams(snapshot="missing"))


async def test_bad_api_key_is_rejected(fake: FakeDaytonaServer) -> None:
    async with AsyncDaytona(DaytonaConfig(api_key="wrong", api_url=fake.api_url, target="us")) as client:
        with pytest.raises(DaytonaAuthenticationError, match="Invalid credentials"):
            await client.create(CreateSandboxFromSnapshotParams(snapshot=SNAPSHOT))
    assert fake.calls[-1].status == 401
