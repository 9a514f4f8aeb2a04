"""Reading the user's input: prompt_toolkit on a terminal, plain lines otherwise (pipes, scripts, tests).

On a terminal: line editing, persistent history (a file in the data dir), Alt-Enter (or Esc then Enter) for a
new line. Everywhere: a line ending in a backslash continues on the next line. `read()` returns None at end
of input (Ctrl-D) and raises KeyboardInterrupt on Ctrl-C; the chat leaves on a second Ctrl-C in a row.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

CONTINUATION = "… "


class LineReader:
    """Plain line input (stdin is not a terminal): no prompt is printed, so output stays clean."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdin

    def read_line(self, prompt: str) -> str | None:
        line = self.stream.readline()
        if not line:
            return None
        return line.rstrip("\n").rstrip("\r")

    def read(self, prompt: str) -> str | None:
        return join_continued(self.read_line, prompt)


class TerminalReader:
    """prompt_toolkit session with a history file and Alt-Enter for newlines."""

    def __init__(self, history_file: Path) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory
        from prompt_toolkit.key_binding import KeyBindings

        bindings = KeyBindings()

        @bindings.add("escape", "enter")
        def _newline(event) -> None:  # type: ignore[no-untyped-def]
            event.current_buffer.insert_text("\n")

        try:
            history_file.parent.mkdir(parents=True, exist_ok=True)
            history: FileHistory | InMemoryHistory = FileHistory(str(history_file))
        except OSError:
            history = InMemoryHistory()
        self.session: PromptSession[str] = PromptSession(history=history, key_bindings=bindings)

    def read_line(self, prompt: str) -> str | None:
        try:
            return self.session.prompt(prompt)
        except EOFError:
            return None

    def read(self, prompt: str) -> str | None:
        return join_continued(self.read_line, prompt)


def join_continued(read_line, prompt: str) -> str | None:  # type: ignore[no-untyped-def]
    """Read one logical input: lines ending in a backslash continue on the next line."""
    first = read_line(prompt)
    if first is None:
        return None
    parts = [first]
    while parts[-1].endswith("\\"):
        parts[-1] = parts[-1][:-1]
        more = read_line(CONTINUATION)
        if more is None:
            break
        parts.append(more)
    return "\n".join(parts)


def make_reader(history_file: Path) -> LineReader | TerminalReader:
    if sys.stdin.isatty() and sys.stdout.isatty():
        return TerminalReader(history_file)
    return LineReader()
