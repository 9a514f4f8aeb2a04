"""`fleet-rlm feedback list|set|clear`: your ratings of answers (the web UI's ▲ Good / ▼ Bad), via the API."""

from __future__ import annotations

import json
from typing import Literal

import typer
from rich.console import Console
from rich.table import Table

from fleet_rlm.cli.connect import open_client
from fleet_rlm.cli.errors import guarded
from fleet_rlm.cli.options import ServerOption

Rating = Literal["good", "bad"]
WIRE = {"good": "up", "bad": "down"}
SHOWN = {"up": "good", "down": "bad"}
feedback_app = typer.Typer(help="List, set and clear your ratings of answers.", no_args_is_help=True)


@feedback_app.command("list")
def list_feedback(
    rating: Rating | None = typer.Option(None, "--rating", help="Only good or bad ratings."),
    mode: str | None = typer.Option(None, "--mode", help="Only runs of this mode (direct, tools, rlm)."),
    session_id: str | None = typer.Option(None, "--session", help="Only runs of this session (its full id)."),
    run_id: str | None = typer.Option(None, "--run", help="Only this run."),
    limit: int = typer.Option(20, "--limit", min=1, max=200, help="How many to show."),
    offset: int = typer.Option(0, "--offset", min=0, help="How many to skip."),
    as_json: bool = typer.Option(False, "--json", help="Print the page as JSON."),
    url_server: str | None = ServerOption,
) -> None:
    """Your ratings, most recently rated first, with the task and the answer each one rated."""

    def body() -> None:
        filters = {"rating": WIRE[rating] if rating else None, "mode": mode, "session_id": session_id}
        with open_client(url_server, need_model=False) as client:
            page = client.list_feedback(**filters, run_id=run_id, limit=limit, offset=offset)
        if as_json:
            typer.echo(json.dumps(page, ensure_ascii=False))
            return
        if not page["items"]:
            typer.echo("no ratings")
            return
        table = Table(box=None)
        table.add_column("run", no_wrap=True, min_width=32)
        table.add_column("rating", no_wrap=True)
        table.add_column("mode", no_wrap=True)
        table.add_column("task", overflow="ellipsis", max_width=48)
        table.add_column("expected / comment", overflow="ellipsis", max_width=48)
        for item in page["items"]:
            note = item["expected_answer"] or item["comment"] or ""
            table.add_row(item["run_id"], SHOWN[item["rating"]], item["execution_mode"], item["task"], note)
        Console(highlight=False).print(table)
        if page["total"] > page["offset"] + len(page["items"]):
            typer.echo(f"({len(page['items'])} of {page['total']}; use --limit, --offset or filters)")

    guarded(body)


@feedback_app.command("set")
def set_feedback(
    run_id: str = typer.Argument(..., metavar="RUN_ID", help="The run (see `fleet-rlm run --json`)."),
    rating: Rating = typer.Argument(..., help="good or bad."),
    comment: str | None = typer.Option(None, "--comment", help="Why."),
    expected: str | None = typer.Option(None, "--expected", help="The answer you expected (your correction)."),
    url_server: str | None = ServerOption,
) -> None:
    """Rate a run (replaces your earlier rating of it)."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            saved = client.put_feedback(
                run_id, {"rating": WIRE[rating], "comment": comment, "expected_answer": expected}
            )
        typer.echo(f"rated run {saved['run_id']} {SHOWN[saved['rating']]}", err=True)

    guarded(body)


@feedback_app.command("clear")
def clear_feedback(
    run_id: str = typer.Argument(..., metavar="RUN_ID", help="The run."),
    url_server: str | None = ServerOption,
) -> None:
    """Remove your rating of a run."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            client.delete_feedback(run_id)
        typer.echo(f"cleared your rating of run {run_id}", err=True)

    guarded(body)
