"""Entry points: `fleet` (chat-first) and `fleet-rlm` (operator commands). Both share the command set."""

from __future__ import annotations

import typer

from fleet_rlm.cli.auth import auth_app
from fleet_rlm.cli.bench import bench_app
from fleet_rlm.cli.chat import chat
from fleet_rlm.cli.daytona import daytona_smoke, daytona_snapshot
from fleet_rlm.cli.db import db_app
from fleet_rlm.cli.doctor import doctor
from fleet_rlm.cli.errors import guarded, run_entry
from fleet_rlm.cli.help_style import hide_flag_types
from fleet_rlm.cli.local_cmd import local_server_app
from fleet_rlm.cli.mcp import mcp
from fleet_rlm.cli.optimize import optimize_app
from fleet_rlm.cli.perf import perf
from fleet_rlm.cli.profiles import profiles_app
from fleet_rlm.cli.replay import replay
from fleet_rlm.cli.run import run
from fleet_rlm.cli.sessions import sessions_app
from fleet_rlm.config import load_settings

hide_flag_types()
bench_app.command("perf")(perf)  # the performance suite joins the capability benchmarks under `bench`


def _version(value: bool) -> None:
    if value:
        from fleet_rlm import __version__

        typer.echo(f"fleet-rlm {__version__}")
        raise typer.Exit()


VersionOption = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version.")
HostOption = typer.Option(None, "--host", help="Address to bind (default 127.0.0.1, or FLEET_HOST).")
PortOption = typer.Option(None, "--port", help="Port to bind (default 8000, or FLEET_PORT).")
InsecureOption = typer.Option(False, "--allow-insecure", help="Allow a non-loopback bind with auth mode 'none'.")


def web(
    host: str | None = HostOption,
    port: int | None = PortOption,
    open_browser: bool = typer.Option(False, "--open", help="Open the workspace in a browser."),
    allow_insecure: bool = InsecureOption,
) -> None:
    """Serve the web workbench and the API (SQLite and the local sandbox unless configured otherwise)."""
    from fleet_rlm.cli.server import preflight, serve

    def body() -> None:
        settings = _settings(host, port)
        preflight(settings, allow_insecure=allow_insecure)
        serve(settings, open_browser=open_browser, path="/app/workspace")

    guarded(body)


def serve_api(
    host: str | None = HostOption,
    port: int | None = PortOption,
    workers: int = typer.Option(1, "--workers", min=1, help="Server processes (use Postgres when > 1)."),
    allow_insecure: bool = InsecureOption,
) -> None:
    """Serve the API only (for integrations and several replicas on Postgres)."""
    from fleet_rlm.cli.server import preflight, serve

    def body() -> None:
        settings = _settings(host, port)
        preflight(settings, allow_insecure=allow_insecure)
        serve(settings, workers=workers)

    guarded(body)


def _settings(host: str | None, port: int | None):  # type: ignore[no-untyped-def]
    overrides: dict[str, object] = {}
    if host is not None:
        overrides["host"] = host
    if port is not None:
        overrides["port"] = port
    return load_settings(**overrides)


def build_fleet_rlm_app() -> typer.Typer:
    app = typer.Typer(
        name="fleet-rlm",
        help="fleet-rlm: a persistent, recursive DSPy workbench.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def root(version: bool = VersionOption) -> None:
        """fleet-rlm operator commands."""

    app.command("chat")(chat)
    app.command("run")(run)
    app.command("web")(web)
    app.command("serve-api")(serve_api)
    app.command("doctor")(doctor)
    app.command("mcp")(mcp)
    app.add_typer(sessions_app, name="sessions")
    app.command("replay")(replay)
    app.add_typer(profiles_app, name="profiles")
    app.add_typer(auth_app, name="auth")
    app.add_typer(db_app, name="db")
    app.add_typer(local_server_app, name="local-server")
    app.add_typer(optimize_app, name="optimize")
    app.add_typer(bench_app, name="bench")
    app.command("daytona-smoke")(daytona_smoke)
    app.command("daytona-snapshot")(daytona_snapshot)
    return app


def build_fleet_app() -> typer.Typer:
    app = typer.Typer(
        name="fleet",
        help="fleet: chat with the workbench, or `fleet web` for the browser.",
        invoke_without_command=True,
        pretty_exceptions_enable=False,
    )

    @app.callback(invoke_without_command=True)
    def root(ctx: typer.Context, version: bool = VersionOption) -> None:
        """Without a command: the terminal chat on the embedded server (SQLite, local sandbox by default)."""
        if ctx.invoked_subcommand is None:
            chat(
                session=None,
                mode="auto",
                trace_mode="compact",
                attach=None,
                url=None,
                repo=None,
                ref=None,
                url_server=None,
            )

    app.command("chat")(chat)
    app.command("run")(run)
    app.command("web")(web)
    app.command("doctor")(doctor)
    return app


def fleet_entry() -> None:
    run_entry(build_fleet_app())


def fleet_rlm_entry() -> None:
    run_entry(build_fleet_rlm_app())
