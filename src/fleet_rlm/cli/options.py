"""Options and choices shared by several commands. Imports only typer, so every command module stays cheap to
import: `fleet-rlm --help` and `sessions list` never pay for the chat, the renderer or the model stack."""

from __future__ import annotations

import typer

MODES: tuple[str, ...] = ("auto", "direct", "tools", "rlm")
TRACE_MODES: tuple[str, ...] = ("compact", "verbose", "off")

ServerOption = typer.Option(
    None, "--url-server", help="Talk to a running server (token from FLEET_TOKEN) instead of the local one."
)


def choice(value: str | None, allowed: tuple[str, ...], option: str) -> str | None:
    if value is not None and value not in allowed:
        raise typer.BadParameter(f"must be one of {', '.join(allowed)}", param_hint=option)
    return value
