"""`fleet` / `fleet-rlm chat`: the terminal chat. The loop reads input, runs slash commands or sends turns.

Everything goes through the API client, in-process (embedded server) or remote (--url-server), so both
modes behave the same and share sessions with the web UI.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fleet_rlm.cli.errors import guarded
from fleet_rlm.cli.options import MODES, TRACE_MODES, ServerOption, choice

if TYPE_CHECKING:
    from fleet_rlm.cli.chat_state import ChatState
    from fleet_rlm.cli.client import FleetClient

HISTORY_FILE = "chat_history"
PROMPT = "> "


SessionOption = typer.Option(None, "--session", help="Resume this session (its id or a unique prefix of it).")
ModeOption = typer.Option("auto", "--mode", help="Execution mode: auto, direct, tools or rlm.")
TraceOption = typer.Option("compact", "--trace-mode", help="How much of each run to show: compact, verbose or off.")
AttachOption = typer.Option(None, "--attach", help="Upload a local file as context (repeatable).")
UrlOption = typer.Option(None, "--url", help="Fetch a URL as context (repeatable).")
RepoOption = typer.Option(None, "--repo", help="Clone a repository as context.")
RefOption = typer.Option(None, "--ref", help="Branch or tag of --repo.")


def chat(
    session: str | None = SessionOption,
    mode: str = ModeOption,
    trace_mode: str = TraceOption,
    attach: list[Path] | None = AttachOption,
    url: list[str] | None = UrlOption,
    repo: str | None = RepoOption,
    ref: str | None = RefOption,
    url_server: str | None = ServerOption,
) -> None:
    """Chat in the terminal: each message is a turn, streamed as it runs. Type /help inside."""
    choice(mode, MODES, "--mode")
    choice(trace_mode, TRACE_MODES, "--trace-mode")
    if ref and not repo:
        raise typer.BadParameter("needs --repo", param_hint="--ref")

    def body() -> None:
        from rich.console import Console

        from fleet_rlm.cli.chat_state import ChatState
        from fleet_rlm.cli.connect import open_client
        from fleet_rlm.cli.ids import resolve_session_id
        from fleet_rlm.cli.settings_memo import cli_settings
        from fleet_rlm.cli.slash import dispatch, show_history

        with open_client(url_server) as client:
            state = ChatState(client=client, console=Console(highlight=False), mode=mode, trace=trace_mode)  # type: ignore[arg-type]
            if url_server is None:  # the embedded server runs with this process's settings
                state.allow_private = cli_settings().url_allow_private
            _banner(state, client, url_server)
            if session:
                state.session_id = resolve_session_id(client, session)
                show_history(state)
            for path in attach or []:
                dispatch(state, f"/attach {_quote(str(path))}")
            for item in url or []:
                dispatch(state, f"/url {_quote(item)}")
            if repo:
                dispatch(state, f"/repo {_quote(repo)}" + (f" {_quote(ref)}" if ref else ""))
            loop(state, cli_settings().data_dir / HISTORY_FILE)

    guarded(body)


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _banner(state: ChatState, client: FleetClient, url_server: str | None) -> None:
    from rich.text import Text

    info = client.info()
    model = (info.get("model") or {}).get("root") or "?"
    where = url_server or "embedded"
    state.console.print(
        Text(
            f"fleet-rlm {info.get('version', '')} · model {model} · sandbox {info.get('sandbox_backend')} "
            f"({info.get('isolation')}) · server {where} · /help for commands",
            style="dim",
        )
    )


def loop(state: ChatState, history_file: Path) -> None:
    """Read-eval loop until /exit, Ctrl-D, or Ctrl-C twice in a row at the prompt.

    One Ctrl-C never leaves: it may land a moment after the turn it meant to cancel has ended."""
    from rich.text import Text

    from fleet_rlm.cli.prompt import make_reader
    from fleet_rlm.cli.turn import LEAVE_HINT

    reader = make_reader(history_file)
    interrupted = False  # the previous prompt ended with Ctrl-C
    _quiet_interrupted_setup()
    while state.running:
        try:
            try:
                line = reader.read(PROMPT)
            except KeyboardInterrupt:
                if interrupted:
                    break
                interrupted = True
                state.hint(LEAVE_HINT)
                continue
            interrupted = False
            if line is None:
                break
            _handle(state, line)
        except KeyboardInterrupt:  # between the turn's end and the next prompt: nothing to cancel, stay
            state.hint(f"interrupted {LEAVE_HINT}")
    state.console.print(Text("bye", style="dim"))


def _quiet_interrupted_setup() -> None:
    """A Ctrl-C can land while the prompt builds its event loop (just after a turn ends). The loop handles it,
    but the half-built objects it leaves warn when collected: "Exception ignored in BaseEventLoop.__del__",
    "coroutine ... was never awaited". Those would print a traceback into the chat. They go to the log."""
    import logging
    import sys
    import warnings

    log = logging.getLogger("fleet_rlm.cli.chat")

    def to_log(unraisable: sys.UnraisableHookArgs) -> None:
        log.debug("ignored in %r: %r", unraisable.object, unraisable.exc_value)

    sys.unraisablehook = to_log
    warnings.filterwarnings("ignore", category=ResourceWarning)
    warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)


def _handle(state: ChatState, line: str) -> None:
    from fleet_rlm.cli.slash import dispatch
    from fleet_rlm.errors import EmptyTask, FleetError

    text = line.strip()
    if not text:
        if line:  # spaces or blank lines typed as a message: say why nothing is sent
            state.hint(EmptyTask().one_line())
        return
    if text.startswith("/"):
        dispatch(state, text)
        return
    try:
        state.send(line)
    except FleetError as exc:
        state.hint(exc.one_line())
