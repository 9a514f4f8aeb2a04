"""The REPL's user-visible globals as the worker reports them after a cell, re-bounded on the host.

The `done` frame is untrusted (guest code shares the worker's process), so whatever it claims is checked and
cut here again: at most `MAX_NAMES` entries of known shape, short strings, sizes as non-negative ints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_NAMES = 50
NAME_CHARS = 100
TYPE_CHARS = 100
PREVIEW_CHARS = 200


@dataclass(frozen=True)
class ReplGlobal:
    name: str
    type: str
    size: int | None
    preview: str
    input: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "size": self.size, "preview": self.preview, "input": self.input}


@dataclass(frozen=True)
class ReplGlobals:
    variables: tuple[ReplGlobal, ...]
    omitted: int


def parse_globals(header: dict[str, Any]) -> ReplGlobals | None:
    """The frame's `globals` report, bounded; None when the worker sent none (or garbage)."""
    raw = header.get("globals")
    if not isinstance(raw, list):
        return None
    kept: list[ReplGlobal] = []
    for entry in raw[:MAX_NAMES]:
        item = _entry(entry)
        if item is not None:
            kept.append(item)
    omitted = header.get("globals_omitted")
    claimed = omitted if type(omitted) is int and omitted >= 0 else 0
    return ReplGlobals(tuple(kept), claimed + max(len(raw) - MAX_NAMES, 0))


def _entry(entry: Any) -> ReplGlobal | None:
    if not isinstance(entry, dict):
        return None
    name, kind, size, text = entry.get("name"), entry.get("type"), entry.get("size"), entry.get("preview")
    if not isinstance(name, str) or not name.isidentifier() or len(name) > NAME_CHARS:
        return None
    return ReplGlobal(
        name=name,
        type=_cut(kind, TYPE_CHARS) if isinstance(kind, str) else "?",
        size=size if type(size) is int and size >= 0 else None,
        preview=_cut(text, PREVIEW_CHARS) if isinstance(text, str) else "",
        input=entry.get("input") is True,
    )


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
