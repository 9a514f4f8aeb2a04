"""HTTP, WebSocket and SSE surfaces. `create_app(settings)` is the only way to get an application."""

from fleet_rlm.api.app import create_app

__all__ = ["create_app"]
