"""Entry points: `fleet` (chat-first) and `fleet-rlm` (operator commands). Both share the command set."""

from __future__ import annotations

import typer

from fleet_rlm.cli.errors import guarded, run_entry
from fleet_rlm.cli.help_style import hide_flag_types
from fleet_rlm.cli.lazy import lazy_group

hide_flag_types()

CLI = "fleet_rlm.cli"
FLEET_RLM_COMMANDS = {  # listed in this order by --help: commands, then groups
    "chat": f"{CLI}.chat:chat",
    "run": f"{CLI}.run:run",
    "web": f"{CLI}.main:web",
    "serve-api": f"{CLI}.main:serve_api",
    "worker": f"{CLI}.worker:worker",
    "doctor": f"{CLI}.doctor:doctor",
    "mcp": f"{CLI}.mcp:mcp",
    "replay": f"{CLI}.replay:replay",
    "daytona-smoke": f"{CLI}.daytona:daytona_smoke",
    "daytona-snapshot": f"{CLI}.daytona:daytona_snapshot",
    "sessions": f"{CLI}.sessions:sessions_app",
    "feedback": f"{CLI}.feedback:feedback_app",
    "profiles": f"{CLI}.profiles:profiles_app",
    "auth": f"{CLI}.auth:auth_app",
    "db": f"{CLI}.db:db_app",
    "local-server": f"{CLI}.local_cmd:local_server_app",
    "optimize": f"{CLI}.optimize:optimize_app",
    "bench": f"{CLI}.bench:bench_app",
}
FLEET_COMMANDS = {name: FLEET_RLM_COMMANDS[name] for name in ("chat", "run", "web", "doctor")}


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
    from fleet_rlm.api import startup_gc
    from fleet_rlm.cli.server import preflight, serve

    def body() -> None:
        startup_gc.pause()  # until the app's lifespan has started
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
    from fleet_rlm.api import startup_gc
    from fleet_rlm.cli.server import preflight, serve

    def body() -> None:
        startup_gc.pause()  # until the app's lifespan has started
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
    from fleet_rlm.config import load_settings

    return load_settings(**overrides)


def build_fleet_rlm_app() -> typer.Typer:
    app = typer.Typer(
        name="fleet-rlm",
        help="fleet-rlm: a persistent, recursive DSPy workbench.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        cls=lazy_group(FLEET_RLM_COMMANDS),  # each command's module is imported only when it runs
    )

    @app.callback()
    def root(version: bool = VersionOption) -> None:
        """fleet-rlm operator commands."""

    return app


def build_fleet_app() -> typer.Typer:
    app = typer.Typer(
        name="fleet",
        help="fleet: chat with the workbench, or `fleet web` for the browser.",
        invoke_without_command=True,
        pretty_exceptions_enable=False,
        cls=lazy_group(FLEET_COMMANDS),
    )

    @app.callback(invoke_without_command=True)
    def root(ctx: typer.Context, version: bool = VersionOption) -> None:
        """Without a command: the terminal chat on the embedded server (SQLite, local sandbox by default)."""
        if ctx.invoked_subcommand is None:
            from fleet_rlm.cli.chat import chat

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

    return app


def fleet_entry() -> None:
    run_entry(build_fleet_app())


def fleet_rlm_entry() -> None:
    run_entry(build_fleet_rlm_app())
