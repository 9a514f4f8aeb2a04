"""`fleet-rlm sessions list|show|fork|export|delete`: the same sessions the chat and web UI see, via the API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import typer
from rich.console import Console

from fleet_rlm.cli.connect import open_client
from fleet_rlm.cli.errors import guarded
from fleet_rlm.cli.ids import resolve_session_id
from fleet_rlm.cli.options import ServerOption
from fleet_rlm.cli.tables import print_table
from fleet_rlm.cli.turn_reply import reply_markup

ExportFormat = Literal["json", "html", "markdown"]
sessions_app = typer.Typer(help="List, show, fork, export and delete chat sessions.", no_args_is_help=True)


@sessions_app.command("list")
def list_sessions(
    search: str | None = typer.Option(None, "--search", "-q", help="Only titles containing this text."),
    limit: int = typer.Option(20, "--limit", min=1, max=200, help="How many to show."),
    as_json: bool = typer.Option(False, "--json", help="Print the page as JSON."),
    url_server: str | None = ServerOption,
) -> None:
    """Recent sessions, most recently updated first."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            page = client.list_sessions(q=search, limit=limit)
        if as_json:
            typer.echo(json.dumps(page, ensure_ascii=False))
            return
        if not page["items"]:
            typer.echo("no sessions")
            return
        rows = [(item["id"], item["title"] or "(untitled)", str(item["updated_at"])[:19]) for item in page["items"]]
        print_table(("id", "title", "updated"), rows)  # whole ids: any unique prefix works as an argument
        if page["total"] > len(page["items"]):
            typer.echo(f"({len(page['items'])} of {page['total']}; use --limit or --search)")

    guarded(body)


@sessions_app.command("show")
def show_session(
    session_id: str = typer.Argument(..., metavar="SESSION_ID", help="Session id (or a unique prefix of it)."),
    as_json: bool = typer.Option(False, "--json", help="Print the session and its turns as JSON."),
    url_server: str | None = ServerOption,
) -> None:
    """A session's title, summary and turns (questions and answers)."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            full_id = resolve_session_id(client, session_id)
            session = client.get_session(full_id)
            turns = client.list_turns(full_id, limit=200)
        if as_json:
            typer.echo(json.dumps({"session": session, "turns": turns["items"]}, ensure_ascii=False))
            return
        console = Console(highlight=False)
        console.print(f"[bold]{session['title'] or '(untitled)'}[/bold]  {session['id']}")
        if session.get("forked_from_id"):
            origin, after = session["forked_from_id"], session.get("forked_after_turn")
            console.print(f"[dim]forked from {origin} after turn {after}[/dim]")
        for fork in session.get("forks") or []:
            console.print(f"[dim]fork {fork['id']} after turn {fork['forked_after_turn']}: {fork['title']}[/dim]")
        if session.get("summary"):
            console.print(f"[dim]{session['summary']}[/dim]")
        for turn in turns["items"]:
            console.print(f"\n[bold]you:[/bold] {turn['user_message']}")
            console.print(f"[bold]fleet:[/bold] {reply_markup(turn)}")

    guarded(body)


@sessions_app.command("fork")
def fork_session(
    session_id: str = typer.Argument(..., metavar="SESSION_ID", help="Session id (or a unique prefix of it)."),
    after_turn: int | None = typer.Option(
        None, "--after-turn", min=0, help="Keep turns 1..N (turns count from 1; default: all of them)."
    ),
    title: str | None = typer.Option(None, "--title", help="Title of the fork (default: the origin's + fork point)."),
    as_json: bool = typer.Option(False, "--json", help="Print the new session as JSON."),
    url_server: str | None = ServerOption,
) -> None:
    """A new session whose history is the session's first turns; the REPL state is not carried."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            full_id = resolve_session_id(client, session_id)
            fork = client.fork_session(full_id, after_turn=after_turn, title=title)
        if as_json:
            typer.echo(json.dumps(fork, ensure_ascii=False))
            return
        typer.echo(fork["id"])
        typer.echo(f"forked session {full_id} after turn {fork['forked_after_turn']}: {fork['title']}", err=True)

    guarded(body)


@sessions_app.command("export")
def export_session(
    session_id: str = typer.Argument(..., metavar="SESSION_ID", help="Session id (or a unique prefix of it)."),
    fmt: ExportFormat = typer.Option(
        "json", "--format", "-f", help="json (the full bundle), html (one self-contained file to share) or markdown."
    ),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write to this file (default: stdout)."),
    redact: bool | None = typer.Option(
        None,
        "--redact/--no-redact",
        help="Replace user ids, names and host paths (default: on for html/markdown, off for json). "
        "Keys and auth headers are removed either way.",
    ),
    url_server: str | None = ServerOption,
) -> None:
    """The session with its turns, runs, events and artifacts: JSON to archive, HTML or Markdown to share."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            full_id = resolve_session_id(client, session_id)
            if fmt == "json" and redact is None:
                text = json.dumps(client.export_session(full_id), indent=2, ensure_ascii=False) + "\n"
            else:
                text = client.export_session_text(full_id, fmt, redact)
        if output is None:
            typer.echo(text, nl=False)
        else:
            output.write_text(text, encoding="utf-8")
            typer.echo(f"exported session {full_id} ({fmt}) to {output}", err=True)

    guarded(body)


@sessions_app.command("delete")
def delete_session(
    session_id: str = typer.Argument(..., metavar="SESSION_ID", help="Session id (or a unique prefix of it)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    url_server: str | None = ServerOption,
) -> None:
    """Delete a session with its turns, runs and events (workspace files stay)."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            full_id = resolve_session_id(client, session_id)
            if not yes:
                title = client.get_session(full_id).get("title") or "untitled"
                if not typer.confirm(f"delete session {full_id} ({title})?"):
                    raise typer.Exit(1)
            client.delete_session(full_id)
        typer.echo(f"deleted session {full_id}")

    guarded(body)
