"""`fleet` / `fleet-rlm chat`: the terminal chat. The loop reads input, runs slash commands or sends turns.

Everything goes through the API client, in-process (embedded server) or remote (--url-server), so both
modes behave the same and share sessions with the web UI.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from fleet_rlm.cli.chat_state import MODES, ChatState
from fleet_rlm.cli.client import FleetClient
from fleet_rlm.cli.connect import open_client
from fleet_rlm.cli.errors import guarded
from fleet_rlm.cli.prompt import make_reader
from fleet_rlm.cli.render import TRACE_MODES
from fleet_rlm.cli.slash import dispatch, show_history
from fleet_rlm.config import load_settings
from fleet_rlm.errors import EmptyTask, FleetError

HISTORY_FILE = "chat_history"
PROMPT = "> "


def _choice(value: str | None, allowed: tuple[str, ...], option: str) -> str | None:
    if value is not None and value not in allowed:
        raise typer.BadParameter(f"must be one of {', '.join(allowed)}", param_hint=option)
    return value


SessionOption = typer.Option(None, "--session", help="Resume this session id.")
ModeOption = typer.Option("auto", "--mode", help="Execution mode: auto, direct, tools or rlm.")
TraceOption = typer.Option("compact", "--trace-mode", help="How much of each run to show: compact, verbose or off.")
AttachOption = typer.Option(None, "--attach", help="Upload a local file as context (repeatable).")
UrlOption = typer.Option(None, "--url", help="Fetch a URL as context (repeatable).")
RepoOption = typer.Option(None, "--repo", help="Clone a repository as context.")
RefOption = typer.Option(None, "--ref", help="Branch or tag of --repo.")
ServerOption = typer.Option(
    None, "--url-server", help="Talk to a running server (token from FLEET_TOKEN) instead of an embedded one."
)


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
    _choice(mode, MODES, "--mode")
    _choice(trace_mode, TRACE_MODES, "--trace-mode")
    if ref and not repo:
        raise typer.BadParameter("needs --repo", param_hint="--ref")

    def body() -> None:
        with open_client(url_server) as client:
            state = ChatState(client=client, console=Console(highlight=False), mode=mode, trace=trace_mode)  # type: ignore[arg-type]
            _banner(state, client, url_server)
            if session:
                state.session_id = session
                show_history(state)
            for path in attach or []:
                dispatch(state, f"/attach {_quote(str(path))}")
            for item in url or []:
                dispatch(state, f"/url {_quote(item)}")
            if repo:
                dispatch(state, f"/repo {_quote(repo)}" + (f" {_quote(ref)}" if ref else ""))
            loop(state, load_settings().data_dir / HISTORY_FILE)

    guarded(body)


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _banner(state: ChatState, client: FleetClient, url_server: str | None) -> None:
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
    """Read-eval loop until /exit, Ctrl-D or Ctrl-C at the prompt."""
    reader = make_reader(history_file)
    while state.running:
        try:
            line = reader.read(PROMPT)
        except KeyboardInterrupt:
            break
        if line is None:
            break
        text = line.strip()
        if not text:
            if line:  # spaces or blank lines typed as a message: say why nothing is sent
                state.hint(EmptyTask().one_line())
            continue
        if text.startswith("/"):
            dispatch(state, text)
            continue
        try:
            state.send(line)
        except FleetError as exc:
            state.hint(exc.one_line())
        except KeyboardInterrupt:  # Ctrl-C between the request and the first event: nothing to cancel yet
            state.hint("interrupted")
    state.console.print(Text("bye", style="dim"))
