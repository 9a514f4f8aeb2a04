"""`fleet web` and `fleet-rlm serve-api`: check what can fail before binding, then hand over to uvicorn."""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import os
import socket
import webbrowser

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.services.startup import prepare_data_dir, prepare_database


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind_policy(settings: Settings, *, allow_insecure: bool) -> None:
    """Auth `none` means one anonymous user: only safe when nothing but this machine can connect."""
    if settings.auth_mode == "none" and not is_loopback(settings.host) and not allow_insecure:
        raise FleetError(
            f"refusing to bind {settings.host} with auth mode 'none'",
            code="insecure_bind",
            action="set FLEET_AUTH_MODE=token (or oidc), bind 127.0.0.1, or pass --allow-insecure",
        )


def check_port_free(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise FleetError(
                    f"port {port} on {host} is already in use",
                    code="port_in_use",
                    action="stop the other server or pass --port with a free port",
                ) from exc
            raise FleetError(
                f"cannot bind {host}:{port} ({exc.strerror or exc})",
                code="bind_failed",
                action="pass a local address with --host",
            ) from exc


def preflight(settings: Settings, *, allow_insecure: bool = False) -> None:
    """Every startup failure we can predict, as one-line errors, before uvicorn prints anything."""
    check_bind_policy(settings, allow_insecure=allow_insecure)
    check_port_free(settings.host, settings.port)
    prepare_data_dir(settings)

    async def _database() -> None:
        database = await prepare_database(settings)
        await database.dispose()

    asyncio.run(_database())


def serve(settings: Settings, *, workers: int = 1, open_browser: bool = False, path: str = "/") -> None:
    """Run the server in the foreground until Ctrl-C / SIGTERM (graceful: see fleet_rlm.api.serving)."""
    url = f"http://{_url_host(settings.host)}:{settings.port}{path}"
    print(f"fleet-rlm serving on {url}  (database: {settings.database_kind}, data dir: {settings.data_dir})")
    if open_browser:
        webbrowser.open(url)
    from fleet_rlm.api import startup_gc
    from fleet_rlm.api.serving import FleetServer, uvicorn_config

    if workers > 1:
        from uvicorn.supervisors import Multiprocess

        # Worker processes rebuild the app from the environment, so pass the resolved overrides through it.
        os.environ["FLEET_HOST"] = settings.host
        os.environ["FLEET_PORT"] = str(settings.port)
        os.environ["FLEET_DATA_DIR"] = str(settings.data_dir)
        config = uvicorn_config(settings, "fleet_rlm.api.app:create_app", factory=True, workers=workers)
        # Workers run uvicorn's own Server: open connections (SSE streams of running turns) get the grace.
        config.timeout_graceful_shutdown = max(config.timeout_graceful_shutdown or 0, int(settings.shutdown_grace_s))
        startup_gc.resume()  # the supervisor runs no lifespan; its workers start with their own collector
        Multiprocess(config, sockets=[config.bind_socket()]).run()
        return
    from fleet_rlm.api.app import create_app

    server = FleetServer(uvicorn_config(settings, create_app(settings)))
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn re-raises the captured Ctrl-C once it has stopped cleanly
        pass
    if not server.started:
        raise SystemExit(3)  # uvicorn's startup-failure code (it has printed why)


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", "::"):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host
