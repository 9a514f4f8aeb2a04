"""Run a command body so user-facing failures print one line (no traceback) and set the exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

import typer

from fleet_rlm.errors import FleetError

T = TypeVar("T")


class _NotLoaded(Exception):
    """Stands in for ConfigError while the settings model is not imported (then none can have been raised)."""


def config_error() -> type[Exception]:
    """`fleet_rlm.config.ConfigError` if the settings model is loaded; looked up when an exception is matched,
    so handling it never imports pydantic for the commands that do not read settings through the model."""
    module = sys.modules.get("fleet_rlm.config")
    return module.ConfigError if module is not None else _NotLoaded  # type: ignore[no-any-return]


def fail(message: str, *, code: int = 1) -> typer.Exit:
    typer.secho(message, fg=typer.colors.RED, err=True)
    return typer.Exit(code)


def crash_line(exc: BaseException) -> str:
    """An unexpected exception as one line; the traceback goes to a log file (or the terminal with FLEET_DEBUG=1)."""
    where = _write_crash_log()
    kept = f"; traceback in {where}" if where else ""
    return (
        f"error[internal_error]: {type(exc).__name__}: {str(exc)[:300]} — this is a bug in fleet-rlm{kept} "
        "(FLEET_DEBUG=1 prints it here)"
    )


def _write_crash_log() -> str | None:
    import os
    import traceback
    from pathlib import Path

    folder = Path(os.environ.get("FLEET_DATA_DIR") or "~/.fleet-rlm").expanduser() / "logs"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "cli-errors.log"
        with path.open("a", encoding="utf-8") as handle:
            handle.write(traceback.format_exc() + "\n")
    except OSError:
        return None
    return str(path)


def run_entry(app: Callable[[], object]) -> None:
    """The one top-level handler of both console scripts: every failure ends as one `error[code]` line."""
    import os

    try:
        app()
    except FleetError as exc:
        typer.secho(exc.one_line(), fg=typer.colors.RED, err=True)
        sys.exit(1)
    except config_error() as exc:
        typer.secho(f"error[config_invalid]: {exc}", fg=typer.colors.RED, err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        typer.echo("", err=True)
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("FLEET_DEBUG"):
            raise
        typer.secho(crash_line(exc), fg=typer.colors.RED, err=True)
        sys.exit(1)


def guarded(body: Callable[[], T]) -> T:
    """Call `body`; turn FleetError/ConfigError into `error[...]` lines on stderr and exit code 1."""
    try:
        return body()
    except FleetError as exc:
        raise fail(exc.one_line()) from None
    except config_error() as exc:
        raise fail(f"error[config_invalid]: {exc}") from None
    except KeyboardInterrupt:
        typer.echo("", err=True)
        sys.exit(130)
