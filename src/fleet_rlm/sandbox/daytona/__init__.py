"""Daytona backend: the same worker and protocol as the local backend, running in Daytona sandboxes.

    factory = interpreter_factory("daytona", settings=settings, session_id="s1", workspace_id="w1")
    rlm = dspy.RLM("context -> answer", interpreter_factory=factory)

`DaytonaBackend` is this package's `SandboxBackend` (`sandbox/backend.py`): the shared `InterpreterFactory`,
`SandboxInterpreter` and `SandboxPool` run on it unchanged.

Channel choice. The worker runs as the one command of a Daytona *process session* (`python3 -I -B
worker_lines.py`), started with `suppress_input_echo`. Host -> worker frames are posted as the command's
stdin; worker -> host frames arrive on the command's log stream (a WebSocket, stdout and stderr multiplexed by
the daemon's marker bytes). Both directions carry each binary protocol frame as base64 text lines
(`sandbox/worker_lines.py`), so frames survive a text, line-oriented channel and can never contain the
daemon's markers. User output never reaches that stdout: the worker moves its channel to hidden fds and
captures each cell separately, exactly as locally. Guest `llm_query`/tool calls are ordinary `call` frames on
this same channel, answered by `reply` frames; several may be in flight, and replies queued together share
one request. We chose this over `code_interpreter.run_code` (Python state per context, streamed stdout)
because run_code has no input channel while a cell runs, so guest code could not call back into the host,
and because it would need a second REPL implementation with a different error model.

Sandboxes come from the snapshot `daytona-snapshot` builds (worker baked in at /opt/fleet-rlm/<version>);
if a snapshot lacks this worker version the files are uploaded once per sandbox. Durable roots live on the
configured volume, subpath `workspaces/<workspace_id>`, mounted at /workspace, so code sees
/workspace/{memory,artifacts,buffers,meta} exactly as under the local backend. Sandboxes carry labels
`{"fleet-rlm": "1", "workspace", "role", "session"?, "parent"?}`; see `backend.py` for reuse and cleanup.
The SDK is async; one private event loop thread per backend runs it (see `loop.py`).
"""

from __future__ import annotations

from fleet_rlm.sandbox.daytona.backend import DaytonaBackend, sandbox_labels, shared_backend, shutdown_backends
from fleet_rlm.sandbox.daytona.client import DaytonaClient, DaytonaUnavailable
from fleet_rlm.sandbox.daytona.options import DaytonaOptions, worker_version
from fleet_rlm.sandbox.daytona.status import daytona_status

__all__ = [
    "DaytonaBackend",
    "DaytonaClient",
    "DaytonaOptions",
    "DaytonaUnavailable",
    "daytona_status",
    "sandbox_labels",
    "shared_backend",
    "shutdown_backends",
    "worker_version",
]
