"""Earlier turns of a session as an input variable, and a cheap running summary that needs no LM call.

The summary keeps the newest turns verbatim (each field clipped) within a character budget; turns that no
longer fit shrink to a one-line topic under `Earlier topics:`, and the oldest topics go last. Its format is
plain text that `update_summary` can parse back, so it can be stored and extended turn by turn.
"""

from __future__ import annotations

from collections.abc import Sequence

from fleet_rlm.runtime.contracts import HistoryTurn

TOPICS_PREFIX = "Earlier topics: "
TURN_MARK = "--- turn ---"
TOPIC_MAX_CHARS = 80
DEFAULT_SUMMARY_CHARS = 4000


def history_variable(history: Sequence[HistoryTurn], summary: str = "") -> str:
    """The session so far, oldest first: the running summary, then each earlier turn in full. "" when new."""
    parts: list[str] = []
    if summary.strip():
        parts.append(f"Summary of the conversation so far:\n{summary.strip()}")
    if history:
        parts.append(f"Earlier turns of this session ({len(history)}, oldest first):")
        for index, turn in enumerate(history, start=1):
            parts.append(f"[turn {index}]\nUser: {turn.user_message}\nAssistant: {turn.answer}")
    return "\n\n".join(parts)


def update_summary(previous: str, turn: HistoryTurn, max_chars: int = DEFAULT_SUMMARY_CHARS) -> str:
    """`previous` plus `turn`, never longer than `max_chars`; older turns degrade to topics, then drop."""
    if max_chars <= 0:
        return ""
    topics, blocks = _parse(previous)
    field_chars = max(40, max_chars // 4)
    blocks.append(f"User: {_clip(turn.user_message, field_chars)}\nAssistant: {_clip(turn.answer, field_chars)}")
    while len(blocks) > 1 and len(_render(topics, blocks)) > max_chars:
        topics.append(_topic(blocks.pop(0)))
    while topics and len(_render(topics, blocks)) > max_chars:
        topics.pop(0)
    rendered = _render(topics, blocks)
    return rendered if len(rendered) <= max_chars else _clip(rendered, max_chars)


def _parse(previous: str) -> tuple[list[str], list[str]]:
    if not previous.strip():
        return [], []
    chunks = previous.split(f"{TURN_MARK}\n")
    head = chunks[0].strip()
    blocks = [chunk.strip("\n") for chunk in chunks[1:] if chunk.strip()]
    if head.startswith(TOPICS_PREFIX.strip()):
        topics = [topic.strip() for topic in head.removeprefix(TOPICS_PREFIX.strip()).split(";") if topic.strip()]
    elif head:  # a summary written by something else (an LM, an older format): keep it as one topic
        topics = [_clip(" ".join(head.split()), TOPIC_MAX_CHARS * 2)]
    else:
        topics = []
    return topics, blocks


def _render(topics: list[str], blocks: list[str]) -> str:
    lines = [TOPICS_PREFIX + "; ".join(topics)] if topics else []
    lines.extend(f"{TURN_MARK}\n{block}" for block in blocks)
    return "\n".join(lines)


def _topic(block: str) -> str:
    first = block.split("\nAssistant:", 1)[0].removeprefix("User:")
    return _clip(" ".join(first.replace(";", ",").split()), TOPIC_MAX_CHARS)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"
