"""Context loaders: what the user gives a turn, written once into the session's host-only context directory.

Public API: `load_context` (+ `LoadedContext`, `LoadedDocument`, `ContextLimits`), `history_variable`,
`update_summary`. Error codes live in `failures`.
"""

from fleet_rlm.runtime.context.documents import LoadedContext, LoadedDocument
from fleet_rlm.runtime.context.history import history_variable, update_summary
from fleet_rlm.runtime.context.loader import load_context, load_source
from fleet_rlm.runtime.context.sources import ContextLimits

__all__ = [
    "ContextLimits",
    "LoadedContext",
    "LoadedDocument",
    "history_variable",
    "load_context",
    "load_source",
    "update_summary",
]
