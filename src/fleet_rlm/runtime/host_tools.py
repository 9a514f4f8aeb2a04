"""Host tools of tools mode (DSPy ReAct): attachments, URLs, workspace files, memory, and delegate_to_rlm.

Each tool returns text for the model and raises ValueError with a short reason on bad input (ReAct shows the
error to the model). Workspace paths are checked and read fd-relative through `sandbox.guestfs` (via the
context package's `wspath`): a link the guest planted or swaps in is refused, never followed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fleet_rlm.runtime.context import LoadedContext
from fleet_rlm.runtime.context.listing import tree_listing
from fleet_rlm.runtime.context.loader import load_source
from fleet_rlm.runtime.context.wspath import path_error, read_workspace_bytes, workspace_entry
from fleet_rlm.runtime.contracts import ContextSource
from fleet_rlm.runtime.scope import TurnScope
from fleet_rlm.runtime.workspace import Memory

READ_MAX_CHARS = 20_000
READ_FILE_MAX_BYTES = 8 * 1024 * 1024
SEARCH_MAX_HITS = 20


def _window(text: str, offset: int, max_chars: int) -> str:
    offset = max(int(offset), 0)
    chunk = text[offset : offset + max(1, min(int(max_chars), READ_MAX_CHARS))]
    rest = len(text) - offset - len(chunk)
    return chunk + (f"\n... [{rest} more chars; read again with offset={offset + len(chunk)}]" if rest > 0 else "")


class HostTools:
    def __init__(
        self, scope: TurnScope, context: LoadedContext, memory: Memory, delegate: Callable[[str], str]
    ) -> None:
        self.scope = scope
        self.context = context
        self.memory = memory
        self._delegate = delegate

    def _document(self, name: str) -> Any:
        for doc in self.context.documents:
            if doc.name == name:
                return doc
        names = ", ".join(d.name for d in self.context.documents) or "none"
        raise ValueError(f"no attachment named {name!r}; attachments: {names}")

    def list_attachments(self) -> str:
        """List the documents attached to this turn (name, kind, size in characters)."""
        if not self.context.documents:
            return "No attachments."
        return "\n".join(f"- {d.name} ({d.kind}, {d.chars} chars)" for d in self.context.documents)

    def read_attachment(self, name: str, offset: int = 0, max_chars: int = 8000) -> str:
        """Read part of an attachment's text, starting at character `offset`."""
        return _window(self._document(name).text, offset, max_chars)

    def search_attachments(self, pattern: str, name: str | None = None) -> str:
        """Search attachments for a regular expression (case-insensitive); returns matching lines with context."""
        try:
            regex = re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from exc
        docs = [self._document(name)] if name else self.context.documents
        hits: list[str] = []
        for doc in docs:
            for match in regex.finditer(doc.text):
                start = max(match.start() - 120, 0)
                snippet = doc.text[start : match.end() + 120].replace("\n", " ")
                hits.append(f"[{doc.name} @ {match.start()}] {snippet}")
                if len(hits) >= SEARCH_MAX_HITS:
                    return "\n".join(hits) + "\n... (more matches; narrow the pattern)"
        return "\n".join(hits) or "No matches."

    def fetch_url(self, url: str, max_chars: int = 8000) -> str:
        """Fetch a web page or file by URL and return its text."""
        doc = load_source(
            ContextSource(kind="url", url=url),
            workspace_dir=self.scope.workspace_root,
            context_dir=self.scope.context_dir,
            settings=self.scope.settings,
            cancel=self.scope.control.cancel,
        )
        return _window(doc.text, 0, max_chars)

    def list_workspace(self, path: str = ".") -> str:
        """List files in the workspace (or a folder of it)."""
        root = self.scope.workspace_root
        relative, kind = workspace_entry(root, path)
        if kind != "dir":
            raise ValueError(f"{relative} is not a folder")
        try:
            listing, _count, _truncated = tree_listing(root, relative, max_entries=200)
        except OSError as exc:  # swapped for a link or removed since the check
            raise path_error(path, exc) from None
        return listing or "(empty)"

    def read_workspace_file(self, path: str, offset: int = 0, max_chars: int = 8000) -> str:
        """Read a text file of the workspace, starting at character `offset`."""
        root = self.scope.workspace_root
        relative, kind = workspace_entry(root, path)
        if kind != "file":
            raise ValueError(f"{relative or '.'} is not a file")
        data, size = read_workspace_bytes(root, relative, max_bytes=READ_FILE_MAX_BYTES)
        text = data.decode("utf-8", errors="replace")
        if size > len(data):
            text += f"\n... [file is {size} bytes; only the first {len(data)} can be read]"
        return _window(text, offset, max_chars)

    def read_memory(self) -> str:
        """Read the workspace's durable memory (memory/MEMORIES.md)."""
        return self.memory.read() or "(memory is empty)"

    def append_memory(self, note: str) -> str:
        """Append a note to durable memory so future turns and sessions can use it."""
        appended = self.memory.append(note)
        self.scope.watcher.sync_memory()
        return f"Saved ({appended} chars)."

    def delegate_to_rlm(self, task: str) -> str:
        """Hand a heavy sub-task (large data, computation, many steps) to an RLM agent with a Python REPL and
        the attachments as `context`; returns its answer."""
        return self._delegate(task)

    def tools(self) -> list[Callable[..., str]]:
        return [
            self.list_attachments,
            self.read_attachment,
            self.search_attachments,
            self.fetch_url,
            self.list_workspace,
            self.read_workspace_file,
            self.read_memory,
            self.append_memory,
            self.delegate_to_rlm,
        ]
