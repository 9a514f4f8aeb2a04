"""Sandboxed Python REPLs for `dspy.RLM` and `dspy.Flex`: DSPy's `CodeInterpreter` over a persistent worker.

Entry point: `fleet_rlm.sandbox.factory.interpreter_factory(backend=None, **options)` returns the zero-argument
`InterpreterFactory` for `dspy.RLM(sig, interpreter_factory=...)`; it carries `execution_instructions` (RLM
puts it in the action prompt) and is deliberately not itself a `CodeInterpreter` (dspy rejects such
factories). Workers run on a `SandboxBackend` (`backend.py`: local in `local.py`, Daytona in `daytona/`),
chosen once from settings (`backends.py`) and owned by the session pool (`pool.py`).

This package re-exports only what loads no model library (roots, options, status, the pool and backend
choice), so the API's auth and the CLI stay light; the interpreter and its factory import dspy and are
imported from their modules.
"""

from __future__ import annotations

from fleet_rlm.sandbox.backend import SandboxBackend
from fleet_rlm.sandbox.backends import backend_from_settings, backend_status, build_pool
from fleet_rlm.sandbox.launcher import IsolationUnavailable, prepare_roots
from fleet_rlm.sandbox.local import LocalBackend
from fleet_rlm.sandbox.options import SandboxOptions
from fleet_rlm.sandbox.pool import SandboxPool
from fleet_rlm.sandbox.roots import GUEST_ROOT, WorkspaceRoots, ensure_roots
from fleet_rlm.sandbox.status import isolation_level

__all__ = [
    "GUEST_ROOT",
    "IsolationUnavailable",
    "LocalBackend",
    "SandboxBackend",
    "SandboxOptions",
    "SandboxPool",
    "WorkspaceRoots",
    "backend_from_settings",
    "backend_status",
    "build_pool",
    "ensure_roots",
    "isolation_level",
    "prepare_roots",
]
