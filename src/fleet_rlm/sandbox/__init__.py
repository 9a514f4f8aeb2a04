"""Sandboxed Python REPLs for `dspy.RLM`: DSPy's `CodeInterpreter` over a persistent worker.

Public entry point: `interpreter_factory(backend="local", **options)` returns a zero-argument callable for
`dspy.RLM(sig, interpreter_factory=...)`. The callable carries `execution_instructions` (RLM puts it in the
action prompt) and is deliberately not itself a `CodeInterpreter` (dspy rejects such factories).

Names are imported on first use: the interpreter pulls in dspy, while roots, options and status stay light for
callers that only need those (the API's auth, the CLI).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fleet_rlm.sandbox.backends import build_pool
    from fleet_rlm.sandbox.factory import InterpreterFactory, interpreter_factory, sandbox_status
    from fleet_rlm.sandbox.interpreter import SandboxInterpreter
    from fleet_rlm.sandbox.launcher import IsolationUnavailable, prepare_roots
    from fleet_rlm.sandbox.options import SandboxOptions
    from fleet_rlm.sandbox.pool import SandboxPool
    from fleet_rlm.sandbox.roots import GUEST_ROOT, WorkspaceRoots, ensure_roots
    from fleet_rlm.sandbox.status import isolation_level

_LAZY = {
    "GUEST_ROOT": "fleet_rlm.sandbox.roots",
    "InterpreterFactory": "fleet_rlm.sandbox.factory",
    "IsolationUnavailable": "fleet_rlm.sandbox.launcher",
    "SandboxInterpreter": "fleet_rlm.sandbox.interpreter",
    "SandboxOptions": "fleet_rlm.sandbox.options",
    "SandboxPool": "fleet_rlm.sandbox.pool",
    "WorkspaceRoots": "fleet_rlm.sandbox.roots",
    "build_pool": "fleet_rlm.sandbox.backends",
    "ensure_roots": "fleet_rlm.sandbox.roots",
    "interpreter_factory": "fleet_rlm.sandbox.factory",
    "isolation_level": "fleet_rlm.sandbox.status",
    "prepare_roots": "fleet_rlm.sandbox.launcher",
    "sandbox_status": "fleet_rlm.sandbox.factory",
}

__all__ = [
    "GUEST_ROOT",
    "InterpreterFactory",
    "IsolationUnavailable",
    "SandboxInterpreter",
    "SandboxOptions",
    "SandboxPool",
    "WorkspaceRoots",
    "build_pool",
    "ensure_roots",
    "interpreter_factory",
    "isolation_level",
    "prepare_roots",
    "sandbox_status",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fleet_rlm.sandbox' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
