"""One worker inside a Daytona sandbox: its process session, its transport, and how it is stopped.

Each worker runs as the single command of its own process session (`fleet-worker-<id>`), because a session's
shell runs commands in order and the worker never ends on its own. Several workers may share a sandbox (a
session's nested RLMs), each in its own process session. The worker files come from the snapshot when it has
this exact worker version baked in, else they are uploaded once per sandbox under the user's home.
"""

from __future__ import annotations

import logging
import shlex
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from daytona import AsyncSandbox, FileUpload, SessionExecuteRequest

from fleet_rlm.sandbox.daytona.client import DaytonaClient, DaytonaUnavailable
from fleet_rlm.sandbox.daytona.options import BAKED_DIR, UPLOAD_DIR, worker_sources, worker_version
from fleet_rlm.sandbox.daytona.transport import LineTransport
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.roots import GUEST_ROOT, MEMORIES_FILE, MEMORIES_HEADER, SUBDIRS

logger = logging.getLogger(__name__)
ISOLATION = "daytona"


def ensure_worker_files(client: DaytonaClient, sandbox: AsyncSandbox) -> str:
    """Directory holding this worker version inside the sandbox: the baked one, else a fresh upload."""
    version = worker_version()

    async def locate(sb: AsyncSandbox) -> str:
        home = (await sb.get_user_home_dir()) or "/root"
        candidates = [f"{BAKED_DIR}/{version}", f"{home.rstrip('/')}/{UPLOAD_DIR}/{version}"]
        quoted = [shlex.quote(d) for d in candidates]
        tests = " || ".join(f"{{ test -f {d}/worker.py && test -f {d}/worker_lines.py && echo {d}; }}" for d in quoted)
        probe = f"sh -c {shlex.quote(tests + ' || true')}"  # a shell even if exec splits arguments itself
        found = (await sb.process.exec(probe, timeout=30)).result.strip().splitlines()
        if found and found[-1] in candidates:
            return found[-1]
        target = candidates[-1]
        uploads = [FileUpload(data, f"{target}/{name}") for name, data in worker_sources().items()]
        await sb.fs.upload_files(uploads)
        return target

    return client.run_in_sandbox(sandbox, "install the worker in the sandbox", locate)


def _limits(options: SandboxOptions) -> str:
    """The worker's own rlimits (as locally), minus the process limit: it is per uid, shared in a sandbox."""
    parts = {
        "as": options.memory_mb * 1024 * 1024,
        "cpu": options.cpu_seconds,
        "fsize": options.max_file_mb * 1024 * 1024,
        "nofile": 1024,
        "core": 0,
    }
    return ",".join(f"{key}={value}" for key, value in parts.items())


def worker_command(python: str, worker_dir: str, options: SandboxOptions, context_dir: str | None = None) -> str:
    """Shell command: create the durable roots on the volume if missing, then run the line-framed worker
    (which kills every process it started after each cell: `--reap tree`)."""
    root = shlex.quote(GUEST_ROOT)
    memories = f"memory/{MEMORIES_FILE}"
    return (
        f"cd {root} && mkdir -p {' '.join(SUBDIRS)} && "
        f"{{ test -f {memories} || printf %s {shlex.quote(MEMORIES_HEADER)} > {memories}; }} && "
        f"{shlex.quote(python)} -I -B {shlex.quote(worker_dir + '/worker_lines.py')} "
        f"--workspace {root} --limits {_limits(options)} --reap tree"
        + (f" --context {shlex.quote(context_dir)}" if context_dir else "")
    )


@dataclass
class RemoteProcess:
    """What `session.describe_exit` asks of a process: `wait(timeout)` returns the worker's exit status."""

    client: DaytonaClient
    sandbox: AsyncSandbox
    session_id: str
    command_id: str

    def wait(self, timeout: float | None = None) -> int:
        deadline = time.monotonic() + (timeout if timeout is not None else 30.0)
        while True:
            try:
                command = self.client.run_in_sandbox(
                    self.sandbox,
                    "read the worker's exit status",
                    lambda sb: sb.process.get_session_command(self.session_id, self.command_id),
                )
            except DaytonaUnavailable as exc:
                raise subprocess.TimeoutExpired("fleet-worker", timeout or 0) from exc
            code = command.exit_code
            if code is not None:
                # The session shell reports a signal N as 128 + N; describe_exit names negative codes.
                if 128 < code < 128 + 65 and (code - 128) in signal.Signals._value2member_map_:
                    return -(code - 128)
                return int(code)
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("fleet-worker", timeout or 0)
            time.sleep(0.05)


@dataclass
class DaytonaWorker:
    """The `WorkerHandle` the shared `WorkerSession` drives (same contract as the local `LocalWorker`)."""

    client: DaytonaClient
    sandbox: AsyncSandbox
    session_id: str
    command_id: str
    transport: LineTransport
    on_exit: Callable[[DaytonaWorker], None] | None = None
    on_attach: Callable[[str], None] | None = None
    guest_root: str = GUEST_ROOT
    isolation: str = ISOLATION
    _killed: bool = field(default=False, repr=False)

    @property
    def sandbox_id(self) -> str:
        return str(self.sandbox.id)

    @property
    def process(self) -> RemoteProcess:
        return RemoteProcess(self.client, self.sandbox, self.session_id, self.command_id)

    def alive(self) -> bool:
        return not self._killed and self.transport.alive()

    def attach_context(self, session_id: str) -> None:
        """Upload `session_id`'s context documents this sandbox lacks (read-only there)."""
        if self.on_attach is not None:
            self.on_attach(session_id)

    def kill(self) -> None:
        """Stop the worker (deleting its process session kills it) and let the owner release the sandbox."""
        if self._killed:
            return
        self._killed = True
        self.transport.close()
        try:
            self.client.run_in_sandbox(
                self.sandbox, "stop the worker", lambda sb: sb.process.delete_session(self.session_id)
            )
        except DaytonaUnavailable as exc:  # the sandbox may be gone already; nothing is left to stop
            logger.debug("stopping worker %s: %s", self.session_id, exc.message)
        if self.on_exit is not None:
            self.on_exit(self)


def start_worker(
    client: DaytonaClient,
    sandbox: AsyncSandbox,
    worker_dir: str,
    options: SandboxOptions,
    *,
    on_exit: Callable[[DaytonaWorker], None] | None = None,
    context_dir: str | None = None,
    on_attach: Callable[[str], None] | None = None,
) -> DaytonaWorker:
    """Start the worker in a new process session; returns before it is ready (the session waits)."""
    session_id = f"fleet-worker-{uuid.uuid4().hex[:12]}"
    command = worker_command(client.options.python, worker_dir, options, context_dir)
    request = SessionExecuteRequest(command=command, run_async=True, suppress_input_echo=True)

    async def launch(sb: AsyncSandbox) -> str:
        await sb.process.create_session(session_id)
        started = await sb.process.execute_session_command(session_id, request)
        return str(started.cmd_id)

    command_id = client.run_in_sandbox(sandbox, "start the worker", launch)
    transport = LineTransport(
        client.loop,
        sandbox.process,
        session_id,
        command_id,
        max_post_bytes=client.options.max_post_bytes,
        request_timeout_s=client.options.request_timeout_s,
    )
    return DaytonaWorker(client, sandbox, session_id, command_id, transport, on_exit, on_attach)
