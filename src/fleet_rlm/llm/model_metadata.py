"""DSPy's model-metadata lookup, memoized per process.

DSPy 3.4 looks a model up in its metadata table on every LM call (the cost estimate, twice, and each capability
question), and for a model the table does not name (a custom or local model, the fake LM) it scans the whole
table every time: ~15% of the API process's GIL time under 50 concurrent turns (py-spy, docs/performance.md).
The table is loaded once per process and never changes, so the answer for (provider, model, namespaces) never
changes either; every caller still gets its own copy, as DSPy's function returns.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from dspy.clients import capabilities, costs, model_metadata

_lookup = model_metadata.model_info


@lru_cache(maxsize=1024)
def _memo(provider: Any, model: Any, namespaces: tuple[str, ...] | None) -> dict[str, Any]:
    return dict(_lookup(provider, model, namespaces=namespaces))


def model_info(provider: Any, model: Any, *, namespaces: Any = None) -> dict[str, Any]:
    """DSPy's `model_info`, answered from the memo (a deep copy, so callers may change it)."""
    try:
        key = tuple(namespaces) if namespaces is not None else None
        return copy.deepcopy(_memo(provider, model, key))
    except TypeError:  # an unhashable argument: ask DSPy directly
        result: dict[str, Any] = _lookup(provider, model, namespaces=namespaces)
        return result


def install() -> None:
    """Point DSPy's callers at the memo (idempotent; a DSPy that moved the function is left alone)."""
    for module in (costs, capabilities):
        if getattr(module, "model_info", None) is _lookup:
            module.model_info = model_info
