"""HTTP, WebSocket and SSE surfaces. `create_app(settings)` is the only way to get an application.

`create_app` is imported on first use, so light submodules (auth tokens, schemas) do not pull in the whole app
and its model libraries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fleet_rlm.api.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> object:
    if name == "create_app":
        from fleet_rlm.api.app import create_app

        return create_app
    raise AttributeError(f"module 'fleet_rlm.api' has no attribute {name!r}")
