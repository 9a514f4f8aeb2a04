"""A session's automatic title: the first line of its first task, cut at a word boundary (no LLM call).

Set when the first turn is created and the session has no title, so "+ New session" entries stop piling up
as "Untitled session"; a title the user typed (or renamed to) is never replaced.
"""

from __future__ import annotations

MAX_TITLE_CHARS = 60


def title_from_task(task: str, limit: int = MAX_TITLE_CHARS) -> str:
    """The task's first non-empty line, whitespace collapsed, at most `limit` characters (with an ellipsis)."""
    line = next((ln for ln in task.splitlines() if ln.strip()), "")
    text = " ".join(line.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:-") + "…"
