"""How a past turn's reply reads in the terminal: its answer, or why it has none (failed, cancelled, running)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.markup import escape

_NO_ANSWER = {
    "failed": "[red]failed[/red]",
    "interrupted": "[red]interrupted[/red]",
    "cancelled": "[yellow]cancelled[/yellow]",
    "running": "[dim](still running)[/dim]",
    "queued": "[dim](queued)[/dim]",
}


def reply_markup(turn: dict[str, Any], shorten: Callable[[str], str] = str) -> str:
    """Rich markup for the `fleet:` line of a turn from GET /sessions/{id}/turns (its `status` and `error`)."""
    answer = turn.get("answer")
    if answer:
        return escape(shorten(answer))
    status = str(turn.get("status") or "")
    label = _NO_ANSWER.get(status, "[dim](no answer)[/dim]")
    error = turn.get("error") or {}
    if status in ("failed", "interrupted") and error.get("message"):
        code = escape(str(error.get("code") or status))
        label += f" [dim]error\\[{code}]: {escape(shorten(str(error['message'])))}[/dim]"
    return label
