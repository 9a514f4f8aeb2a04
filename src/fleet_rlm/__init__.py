"""fleet-rlm: a persistent, recursive DSPy workbench.

`__version__` is looked up on first use: `importlib.metadata` costs a CLI call more than the rest of its work.
"""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    if name != "__version__":
        raise AttributeError(f"module 'fleet_rlm' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("fleet-rlm")
    except PackageNotFoundError:  # running from a source tree without installation
        found = "0.0.0+source"
    globals()["__version__"] = found
    return found
