"""`fleet-rlm daytona-smoke` and `daytona-snapshot`: drive the Daytona backend's own smoke test and snapshot build.

The work lives in `fleet_rlm.sandbox.daytona.smoke.run_smoke` and `...snapshot.build_snapshot`; these commands
only print each step green or red and set the exit code (1 on any red step).
"""

from __future__ import annotations

import importlib
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from fleet_rlm.cli.errors import guarded
from fleet_rlm.config import load_settings
from fleet_rlm.errors import FleetError


def _load(module: str, name: str) -> Any:
    try:
        return getattr(importlib.import_module(f"fleet_rlm.sandbox.daytona.{module}"), name)
    except (ImportError, AttributeError) as exc:
        raise FleetError(
            f"this installation has no Daytona {module} support ({exc})",
            code="daytona_unavailable",
            action="upgrade fleet-rlm to a version with the Daytona backend",
        ) from exc


def print_steps(steps: Any) -> bool:
    """Print StepResult-like objects (name, ok, detail, action); True when all passed."""
    console = Console(highlight=False)
    ok = True
    for step in steps:
        mark, style = ("✓", "green") if step.ok else ("✗", "red")
        console.print(Text(f"{mark} {step.name}: {step.detail}", style=style))
        if not step.ok and getattr(step, "action", None):
            console.print(Text(f"  → {step.action}", style="yellow"))
        ok = ok and bool(step.ok)
    return ok


def daytona_smoke(
    repo: str | None = typer.Option(None, "--repo", help="Also clone this repository in the sandbox."),
    ref: str | None = typer.Option(None, "--ref", help="Branch or tag of --repo."),
) -> None:
    """Create a Daytona sandbox, run cells, use the volume (and clone --repo), then clean up."""
    if ref and not repo:
        raise typer.BadParameter("needs --repo", param_hint="--ref")

    def body() -> bool:
        run_smoke = _load("smoke", "run_smoke")
        return print_steps(run_smoke(load_settings(), repo=repo, ref=ref))

    raise typer.Exit(0 if guarded(body) else 1)


def daytona_snapshot(
    refresh: bool = typer.Option(False, "--refresh", help="Rebuild even if the snapshot exists."),
) -> None:
    """Build the Daytona snapshot sandboxes start from (worker and Python packages preinstalled)."""

    def body() -> bool:
        build_snapshot = _load("snapshot", "build_snapshot")
        result = build_snapshot(load_settings(), refresh=refresh)
        if isinstance(result, list | tuple):
            return print_steps(result)
        typer.echo(str(result) if result is not None else "snapshot ready")
        return True

    raise typer.Exit(0 if guarded(body) else 1)
