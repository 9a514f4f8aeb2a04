"""HTTP, WebSocket and SSE surfaces. `fleet_rlm.api.app.create_app(settings)` is the only way to get an
application; this package re-exports nothing, so light submodules (auth tokens, schemas) stay light."""
