"""Run a command body so user-facing failures print one line (no traceback) and set the exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

import typer

from fleet_rlm.config import ConfigError
from fleet_rlm.errors import FleetError

T = TypeVar("T")


def fail(message: str, *, code: int = 1) -> typer.Exit:
    typer.secho(message, fg=typer.colors.RED, err=True)
    return typer.Exit(code)


def guarded(body: Callable[[], T]) -> T:
    """Call `body`; turn FleetError/ConfigError into `error[...]` lines on stderr and exit code 1."""
    try:
        return body()
    except FleetError as exc:
        raise fail(exc.one_line()) from None
    except ConfigError as exc:
        raise fail(f"error[config_invalid]: {exc}") from None
    except KeyboardInterrupt:
        typer.echo("", err=True)
        sys.exit(130)
