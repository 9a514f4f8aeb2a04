"""Slash commands of the terminal chat. Each is a small function of (state, argument text).

Unknown commands and bad arguments print a one-line hint; API failures print their one-line error. Nothing
here raises to the chat loop except `/exit`, which clears `state.running`.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.markdown import Markdown
from rich.table import Table

from fleet_rlm.cli.chat_state import ChatState, Staged
from fleet_rlm.cli.ids import resolve_session_id
from fleet_rlm.cli.options import MODES, TRACE_MODES
from fleet_rlm.cli.tables import print_table
from fleet_rlm.cli.turn_reply import reply_markup
from fleet_rlm.errors import FleetError

MEMORY_FILE = "memory/MEMORIES.md"
PROFILES_PATH = "/api/v1/llm-profiles"


class UsageError(Exception):
    """Bad arguments to a slash command: printed as `usage: ...`."""


@dataclass(frozen=True)
class Command:
    name: str
    usage: str
    help: str
    run: Callable[[ChatState, list[str]], None]


COMMANDS: dict[str, Command] = {}


def command(name: str, usage: str, help: str) -> Callable[[Callable[[ChatState, list[str]], None]], None]:
    def register(func: Callable[[ChatState, list[str]], None]) -> None:
        COMMANDS[name] = Command(name, usage, help, func)

    return register


def _one(args: list[str]) -> str:
    if len(args) != 1:
        raise UsageError
    return args[0]


def _need_session(state: ChatState) -> str:
    if state.session_id is None:
        raise FleetError("no session yet", code="no_session", action="send a message first, or /resume ID")
    return state.session_id


@command("help", "/help", "show the commands and keys")
def _help(state: ChatState, args: list[str]) -> None:
    table = Table(show_header=False, box=None, padding=(0, 2))
    for item in COMMANDS.values():
        table.add_row(item.usage, item.help)
    state.console.print(table)
    state.say(
        "Keys: Enter sends · Alt-Enter (or Esc, Enter) or a trailing \\ continues on a new line · "
        "Ctrl-C cancels a running turn · Ctrl-C at the prompt or Ctrl-D exits · ↑/↓ history"
    )


@command("new", "/new", "start a new session (created on your next message)")
def _new(state: ChatState, args: list[str]) -> None:
    state.session_id = None
    state.staged = Staged()
    state.say("new session: it starts with your next message")


@command("sessions", "/sessions [SEARCH]", "list recent sessions")
def _sessions(state: ChatState, args: list[str]) -> None:
    page = state.client.list_sessions(q=" ".join(args) or None, limit=20)
    if not page["items"]:
        state.say("no sessions yet")
        return
    rows = []
    for item in page["items"]:
        marker = " *" if item["id"] == state.session_id else ""
        rows.append((item["id"] + marker, item["title"] or "(untitled)", str(item["updated_at"])[:19]))
    print_table(("id", "title", "updated"), rows, console=state.console)


@command("resume", "/resume ID", "continue an earlier session (and follow its running turn)")
def _resume(state: ChatState, args: list[str]) -> None:
    session = state.client.get_session(resolve_session_id(state.client, _one(args)))
    state.session_id = str(session["id"])
    state.staged = Staged()
    show_history(state)
    active = state.client.active_run(state.session_id)
    if active:
        state.say(f"following the running turn {active}")
        state.follow(active)


def show_history(state: ChatState, last: int = 3) -> None:
    assert state.session_id is not None
    session = state.client.get_session(state.session_id)
    turns = state.client.list_turns(state.session_id, limit=100)
    state.say(f"resumed session {session['id']} · {session['title'] or '(untitled)'} · {turns['total']} turns")
    for turn in turns["items"][-last:]:
        state.console.print(f"[bold]you:[/bold] {_short(turn['user_message'])}")
        state.console.print(f"[bold]fleet:[/bold] {reply_markup(turn, _short)}")


def _short(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@command("attach", "/attach PATH", "upload a local file into the session's context (from the next turn on)")
def _attach(state: ChatState, args: list[str]) -> None:
    path = Path(_one(args)).expanduser()
    uploaded = state.client.upload_file(path, session_id=state.session_id)
    state.staged.attachment_ids.append(str(uploaded["id"]))
    state.staged.attachment_names.append(path.name)
    state.say(f"attached {path.name} ({uploaded.get('size', 0):,} bytes): the session holds it from the next turn")


@command("url", "/url URL", "fetch a URL as context for the next turn")
def _url(state: ChatState, args: list[str]) -> None:
    from fleet_rlm.cli.targets import check_url_target  # lazily: keeps the chat's start fast

    url = _one(args)
    check_url_target(url, allow_private=state.allow_private)
    state.staged.urls.append(url)
    state.say(f"will fetch {url} with the next turn")


@command("repo", "/repo URL [REF]", "clone a repository (branch or tag) as context for the next turn")
def _repo(state: ChatState, args: list[str]) -> None:
    if len(args) not in (1, 2):
        raise UsageError
    from fleet_rlm.cli.targets import check_repo_target

    check_repo_target(args[0], allow_private=state.allow_private)
    state.staged.repo_url = args[0]
    state.staged.repo_ref = args[1] if len(args) == 2 else None
    state.say(f"will clone {args[0]}" + (f" at {args[1]}" if len(args) == 2 else "") + " with the next turn")


@command("context", "/context PATH", "use a file or folder of the workspace volume as context")
def _context(state: ChatState, args: list[str]) -> None:
    state.staged.context_paths.append(_one(args))
    state.say(f"will load workspace path {args[0]} with the next turn")


@command("sources", "/sources", "list the context this session holds (every next turn gets it)")
def _sources(state: ChatState, args: list[str]) -> None:
    items = state.client.session_context(_need_session(state))
    if not items:
        state.say("this session holds no context yet")
        return
    table = Table("name", "source", "size", "turn", "id", box=None)
    for item in items:
        table.add_row(item["name"], item["source"], f"{item['chars']:,} chars", str(item["turn"]), item.get("id") or "")
    state.console.print(table)


@command("detach", "/detach NAME|ID", "remove a file, URL, repository or text from this session's context")
def _detach(state: ChatState, args: list[str]) -> None:
    session_id = _need_session(state)
    wanted = " ".join(args)
    if not wanted:
        raise UsageError
    held = [item for item in state.client.session_context(session_id) if item.get("id")]
    found = [item for item in held if item["name"] == wanted or item["id"] == wanted]
    found = found or [item for item in held if item["id"].startswith(wanted)]
    if not found:
        names = ", ".join(item["name"] for item in held) or "none"
        raise FleetError(
            f"this session holds no context named {wanted!r}",
            code="context_source_not_found",
            action=f"give one of: {names}"[:300],
        )
    if len(found) > 1:
        ids = ", ".join(f"{item['id']} (turn {item['turn']})" for item in found)
        raise FleetError(
            f"{len(found)} sources are named {wanted!r}", code="ambiguous_source", action=f"give its id: {ids}"
        )
    state.client.remove_context_source(session_id, found[0]["id"])
    state.say(f"removed {found[0]['name']} from the session's context: the next turn no longer gets it")


@command("mode", "/mode auto|direct|tools|rlm", "choose how turns run (auto lets the router decide)")
def _mode(state: ChatState, args: list[str]) -> None:
    mode = _one(args)
    if mode not in MODES:
        raise UsageError
    state.mode = mode
    state.say(f"mode: {mode}")


@command("trace", "/trace compact|verbose|off", "how much of each run to show")
def _trace(state: ChatState, args: list[str]) -> None:
    trace = _one(args)
    if trace not in TRACE_MODES:
        raise UsageError
    state.trace = trace  # type: ignore[assignment]
    state.say(f"trace: {trace}")


CLEAR_PROFILE = "off"


@command("profile", "/profile [NAME|off]", "use a stored LM profile for this session (off: the default model)")
def _profile(state: ChatState, args: list[str]) -> None:
    """Alone: the session's profile and the ones to choose from. A name is checked now, not at the next turn."""
    if len(args) > 1:
        raise UsageError
    if not state.client.has_route(PROFILES_PATH):
        raise FleetError(
            "this server has no LM profiles API",
            code="profiles_unavailable",
            action="configure the model with DSPY_LM_MODEL / DSPY_LLM_API_KEY where the server runs",
        )
    from fleet_rlm.llm.profiles import ENV_DELEGATE_PROFILE, ENV_PROFILE  # lazily: keeps the chat's start fast

    names = [str(p["name"]) for p in state.client.get_json(PROFILES_PATH)["items"]]
    choices = ", ".join(names) or "none stored"
    if not args:
        clear = f"; `/profile {CLEAR_PROFILE}` goes back to the default model" if state.profile else ""
        state.say(f"profile: {state.profile or '(default model)'} · yours: {choices}{clear}")
        return
    name: str | None = args[0]
    if name == CLEAR_PROFILE:
        name = None
    elif name not in {*names, ENV_PROFILE, ENV_DELEGATE_PROFILE}:
        raise FleetError(
            f"no LM profile named {name!r}",
            code="profile_not_found",
            action=f"choose one of: {choices} (`fleet-rlm profiles list`), or `/profile {CLEAR_PROFILE}`",
        )
    state.profile = name
    if state.session_id is not None:
        settings = dict(state.client.get_session(state.session_id)["settings"] or {})
        settings.pop("profile", None)
        settings |= {"profile": name} if name else {}
        state.client.update_session(state.session_id, settings=settings)
    state.say(f"profile: {name}" if name else "profile cleared: turns use the default model")


@command("memory", "/memory", f"show the workspace's durable memory ({MEMORY_FILE})")
def _memory(state: ChatState, args: list[str]) -> None:
    try:
        found = state.client.volume_file(MEMORY_FILE)
    except FleetError as exc:
        if exc.status != 404:
            raise
        state.say("no memories yet")
        return
    state.console.print(Markdown(found["content"] or "_(empty)_"))


@command("artifacts", "/artifacts", "list files this session's runs saved")
def _artifacts(state: ChatState, args: list[str]) -> None:
    page = state.client.list_artifacts(_need_session(state))
    if not page["items"]:
        state.say("no artifacts in this session")
        return
    rows = [(item["path"], f"{item['size']:,}", item["id"]) for item in page["items"]]
    print_table(("path", "size", "id"), rows, console=state.console)


@command("export", "/export [FILE]", "save the session (turns, runs, events) as JSON")
def _export(state: ChatState, args: list[str]) -> None:
    session_id = _need_session(state)
    if len(args) > 1:
        raise UsageError
    target = Path(args[0] if args else f"fleet-session-{session_id}.json").expanduser()
    bundle = state.client.export_session(session_id)
    target.write_text(json.dumps(bundle, indent=2, ensure_ascii=False), encoding="utf-8")
    state.say(f"exported {len(bundle.get('turns', []))} turns to {target}")


@command("cancel", "/cancel", "cancel this session's running turn (e.g. one started elsewhere)")
def _cancel(state: ChatState, args: list[str]) -> None:
    run_id = state.client.active_run(_need_session(state))
    if run_id is None:
        state.say("no turn is running in this session")
        return
    if state.client.cancel_run(run_id) is None:
        state.say(f"run {run_id} already ended; there was nothing to stop")
        return
    state.say(f"cancel requested for run {run_id}")


@command("exit", "/exit", "leave the chat (Ctrl-D works too)")
def _exit(state: ChatState, args: list[str]) -> None:
    state.running = False


def dispatch(state: ChatState, line: str) -> None:
    """Run one slash command line; every failure becomes a one-line hint."""
    try:
        parts = shlex.split(line[1:])
    except ValueError as exc:
        state.hint(f"could not parse the command ({exc}); quote paths with spaces")
        return
    name = parts[0].lower() if parts else ""
    found = COMMANDS.get(name)
    if found is None:
        state.hint(f"unknown command /{name}; type /help for the list")
        return
    try:
        found.run(state, parts[1:])
    except UsageError:
        state.hint(f"usage: {found.usage} — {found.help}")
    except FleetError as exc:
        state.hint(exc.one_line())
    except OSError as exc:
        state.hint(f"error[io]: {exc}")
