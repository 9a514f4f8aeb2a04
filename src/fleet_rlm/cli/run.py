"""`fleet-rlm run "TASK"`: one turn for scripts. Answer (or JSON) on stdout, progress on stderr.

Exit codes: 0 the turn succeeded; 1 it failed (or the server refused it); 2 no model is configured;
130 it was cancelled (Ctrl-C). Each run gets a new session (or continues `--session`), so it shows up in
`fleet-rlm sessions list`; refused input (a missing or unreadable file, a blocked URL, an upload over the limit)
creates none.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fleet_rlm.cli.errors import guarded
from fleet_rlm.cli.options import MODES, TRACE_MODES, ServerOption, choice
from fleet_rlm.errors import EmptyTask

if TYPE_CHECKING:
    from fleet_rlm.cli.render import TurnOutcome

EXIT_CODES = {"succeeded": 0, "cancelled": 130}


def check_urls(urls: list[str], *, local: bool) -> None:
    """Refuse a URL the server would refuse before any session is created (the local server's policy is this
    process's settings; a remote server applies its own when the turn starts, and refuses it with the same code)."""
    if not urls:
        return
    from fleet_rlm.cli.settings_memo import cli_settings
    from fleet_rlm.runtime.context.targets import check_turn_targets

    allowed = cli_settings().url_allow_private if local else True
    check_turn_targets(urls, None, allow_private=None if allowed else False)  # None: syntax only (no DNS)


def run(
    task: str = typer.Argument(..., metavar="TASK", help="The task. Use - to read it from stdin."),
    context: list[Path] | None = typer.Option(None, "--context", help="A local file to use as context (repeatable)."),
    url: list[str] | None = typer.Option(None, "--url", help="Fetch a URL as context (repeatable)."),
    mode: str = typer.Option("auto", "--mode", help="Execution mode: auto, direct, tools or rlm."),
    trace_mode: str = typer.Option("compact", "--trace-mode", help="Progress on stderr: compact, verbose or off."),
    as_json: bool = typer.Option(False, "--json", help="Print the outcome as JSON (answer, status, usage, ids)."),
    session: str | None = typer.Option(
        None, "--session", help="Continue this session (its id or a unique prefix) instead of a new one."
    ),
    url_server: str | None = ServerOption,
) -> None:
    """Run one task and print its answer; progress goes to stderr, the exit code says whether it worked."""
    choice(mode, MODES, "--mode")
    choice(trace_mode, TRACE_MODES, "--trace-mode")
    content = sys.stdin.read() if task == "-" else task

    def body() -> TurnOutcome:
        if not content.strip():
            raise EmptyTask()  # the server's code for it, refused before a server or session starts

        from rich.console import Console

        from fleet_rlm.cli.chat_state import ChatState, Staged
        from fleet_rlm.cli.client import require_file
        from fleet_rlm.cli.connect import open_client
        from fleet_rlm.cli.ids import resolve_session_id

        files = [require_file(path.expanduser()) for path in context or []]  # a typo creates no session
        check_urls(url or [], local=url_server is None)
        progress = Console(stderr=True, highlight=False)
        with open_client(url_server) as client:
            state = ChatState(client=client, console=progress, mode=mode)
            if session:
                state.session_id = resolve_session_id(client, session)
            staged = Staged(urls=list(url or []))
            for path in files:  # uploaded before the session exists: a refused file creates nothing
                staged.attachment_ids.append(str(client.upload_file(path, session_id=state.session_id)["id"]))
            state.staged = staged
            with state.turn_session(content) as session_id:  # the first progress line: before the turn loads
                from fleet_rlm.cli.render import TurnRenderer
                from fleet_rlm.cli.turn import drive_turn

                renderer = TurnRenderer(progress, trace_mode, show_answer=False)  # type: ignore[arg-type]
                body = state.turn_body(content)
                return drive_turn(client, renderer, session_id=session_id, body=body, notice=state.hint)

    outcome = guarded(body)
    if as_json:
        typer.echo(json.dumps(outcome.to_json(), ensure_ascii=False))
    elif outcome.ok:
        typer.echo(outcome.answer)
    raise typer.Exit(EXIT_CODES.get(outcome.status, 1))
