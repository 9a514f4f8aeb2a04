"""What a chat remembers between turns: the session, mode, trace mode and context staged for the next turn.

Staged context (attachments, URLs, a repository, workspace paths) applies to the next turn only, then is
cleared; mode and trace mode stick until changed. The session is created lazily on the first message, titled
after it, so opening and closing the chat leaves no empty sessions behind.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from fleet_rlm.cli.client import FleetClient
from fleet_rlm.cli.options import MODES  # noqa: F401 - re-exported for slash commands
from fleet_rlm.errors import FleetError

if TYPE_CHECKING:  # the renderer and the event models load with the first turn, after the session line
    from fleet_rlm.cli.render import TraceMode, TurnOutcome

TITLE_CHARS = 80


@dataclass
class Staged:
    attachment_ids: list[str] = field(default_factory=list)
    attachment_names: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    repo_url: str | None = None
    repo_ref: str | None = None
    context_paths: list[str] = field(default_factory=list)

    def describe(self) -> list[str]:
        items = [f"file {name}" for name in self.attachment_names]
        items += [f"url {url}" for url in self.urls]
        if self.repo_url:
            items.append(f"repo {self.repo_url}" + (f"@{self.repo_ref}" if self.repo_ref else ""))
        items += [f"workspace {path}" for path in self.context_paths]
        return items


@dataclass
class ChatState:
    client: FleetClient
    console: Console
    mode: str = "auto"
    trace: TraceMode = "compact"
    session_id: str | None = None
    staged: Staged = field(default_factory=Staged)
    profile: str | None = None
    running: bool = True
    allow_private: bool | None = None  # the server's url_allow_private when known (embedded server), else None

    def say(self, message: str, style: str = "dim") -> None:
        self.console.print(Text(message, style=style))

    def hint(self, message: str) -> None:
        self.console.print(Text(message, style="yellow"))

    @contextlib.contextmanager
    def turn_session(self, content: str) -> Iterator[str]:
        """The session for a turn about `content`. One created here is deleted again when the server refuses
        the turn before running it (an upload refused, a blocked URL): refused input leaves no session."""
        created = self.session_id is None
        session_id = self.ensure_session(content)
        try:
            yield session_id
        except FleetError:
            if created:
                self._discard(session_id)
            raise

    def _discard(self, session_id: str) -> None:
        try:
            if self.client.list_turns(session_id, limit=1)["total"] == 0:
                self.client.delete_session(session_id)
                self.session_id = None
                self.say(f"session {session_id} removed: the server refused its first turn")
        except FleetError:
            pass  # the refusal is what the user needs to see; a session left behind is the lesser harm

    def ensure_session(self, first_message: str) -> str:
        if self.session_id is None:
            title = " ".join(first_message.split())[:TITLE_CHARS]
            settings = {"profile": self.profile} if self.profile else {}
            created = self.client.create_session(title=title, settings=settings)
            self.session_id = str(created["id"])
            self.say(f"session {self.session_id} · {title}")
        return self.session_id

    def turn_body(self, content: str) -> dict[str, Any]:
        body: dict[str, Any] = {"content": content}
        if self.mode != "auto":
            body["execution_mode"] = self.mode
        staged = self.staged
        if staged.attachment_ids:
            body["attachment_ids"] = list(staged.attachment_ids)
        if staged.urls:
            body["urls"] = list(staged.urls)
        if staged.repo_url:
            body["repo_url"] = staged.repo_url
            if staged.repo_ref:
                body["repo_ref"] = staged.repo_ref
        if staged.context_paths:
            body["context_paths"] = list(staged.context_paths)
        return body

    def send(self, content: str) -> TurnOutcome:
        """Run one turn with the staged context; staged context is consumed once the server accepted it."""
        from fleet_rlm.cli.render import TurnRenderer
        from fleet_rlm.cli.turn import drive_turn

        with self.turn_session(content) as session_id:
            body = self.turn_body(content)
            renderer = TurnRenderer(self.console, self.trace)
            outcome = drive_turn(self.client, renderer, session_id=session_id, body=body, notice=self.hint)
        self.staged = Staged()
        return outcome

    def follow(self, run_id: str) -> TurnOutcome:
        from fleet_rlm.cli.render import TurnRenderer
        from fleet_rlm.cli.turn import drive_turn

        assert self.session_id is not None
        renderer = TurnRenderer(self.console, self.trace)
        return drive_turn(self.client, renderer, session_id=self.session_id, run_id=run_id, notice=self.hint)
