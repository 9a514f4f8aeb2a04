"""`fleet-rlm local-server status|stop`: the CLI's own background server (see `local_server.py`)."""

from __future__ import annotations

import typer

from fleet_rlm.cli.errors import guarded

local_server_app = typer.Typer(
    help="The local server the CLI starts on first use and reuses (stops by itself when idle).",
    no_args_is_help=True,
)


@local_server_app.command("status")
def status() -> None:
    """Whether a local server runs for this data dir, and where."""
    from fleet_rlm.cli.local_server import current
    from fleet_rlm.config import load_settings

    def body() -> None:
        settings = load_settings()
        found = current(settings.data_dir)
        if found is None:
            typer.echo(f"no local server for {settings.data_dir}")
            raise typer.Exit(1)
        server, _ = found
        typer.echo(f"local server pid {server.pid} on {server.base_url} (data dir {settings.data_dir})")

    guarded(body)


@local_server_app.command("stop")
def stop() -> None:
    """Stop the local server of this data dir (running turns become interrupted)."""
    from fleet_rlm.cli.local_server import current, dir_lock, remove_discovery, stop_server
    from fleet_rlm.config import load_settings

    def body() -> None:
        settings = load_settings()
        if not settings.data_dir.is_dir():
            typer.echo("no local server")
            return
        with dir_lock(settings.data_dir):
            found = current(settings.data_dir)
            if found is None:
                typer.echo("no local server")
                return
            server, _ = found
            stopped = stop_server(server)
            remove_discovery(settings.data_dir, pid=server.pid)
        typer.echo(f"stopped the local server (pid {server.pid})" if stopped else f"pid {server.pid} is stopping")

    guarded(body)
