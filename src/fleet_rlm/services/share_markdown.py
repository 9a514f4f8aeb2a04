"""A session as Markdown for pasting into an issue or a doc: turns, a collapsed trace per run, answers.

User and model text only ever appears inside fenced blocks whose fence is longer than any backtick run in the
text, or HTML-escaped in one-line list items and `<summary>` lines, so pasted output cannot turn into markup,
links or mentions in the page it is pasted into. Long texts are cut (the HTML export keeps more).
"""

from __future__ import annotations

import html
import re

from fleet_rlm.services.share_tree import Node, RunView, SessionView

MAX_BLOCK_CHARS = 4000
MAX_LINE_CHARS = 200
BACKTICKS = re.compile(r"`+")
INLINE_SPECIAL = re.compile(r"([\\`*_{}\[\]()#|~>@])")


def render_markdown(view: SessionView) -> str:
    session = view.bundle.session
    lines = [f"# {_inline(session.title or 'untitled session')}", ""]
    lines.append(
        f"Exported from fleet-rlm at {view.bundle.exported_at:%Y-%m-%d %H:%M} UTC · session `{session.id}` · "
        f"{_count(len(view.turns), 'turn')}"
    )
    if session.forked_from_id:
        lines.append(f"Forked from session `{session.forked_from_id}` after turn {session.forked_after_turn}.")
    lines += ["", "> **Redaction**"]
    lines += [f"> - {_inline(line)}" for line in view.redaction]
    lines.append("")
    for turn in view.turns:
        lines += [f"## Turn {turn.number}", "", "**User**", "", *_block(turn.message), ""]
        for run in turn.runs:
            lines += _run(run)
        lines += ["**Answer**", "", *(_block(turn.answer) if turn.answer else ["_(no answer)_"]), ""]
    if view.artifacts:
        lines += ["## Artifacts", ""]
        for artifact in view.artifacts:
            lines.append(
                f"- {_inline(artifact.name)} ({_inline(artifact.media_type or 'unknown type')}, {artifact.size} bytes)"
            )
    return "\n".join(lines).rstrip() + "\n"


def _run(view: RunView) -> list[str]:
    run, stats = view.run, view.stats
    summary = f"Trace: run {run.id} · {run.execution_mode} · {run.status} · {view.total_ms} ms · " + ", ".join(
        view.counts()
    )
    lines = ["<details>", f"<summary>{html.escape(summary)}</summary>", ""]
    for node in view.nodes:
        lines += _node(node, 0)
    if view.truncated:
        lines.append(f"- _(first {stats['events']} events only)_")
    lines += ["", "</details>", ""]
    return lines


def _node(node: Node, level: int) -> list[str]:
    pad = "  " * level
    state = " · **failed**" if node.ok is False else ""
    subtitle = f" · {_inline(node.subtitle)}" if node.subtitle else ""
    lines = [f"{pad}- **{_inline(node.title)}**{subtitle} · {node.duration_ms} ms{state}"]
    for section in node.sections:
        if section.style in ("code", "output", "error") or "\n" in section.text or len(section.text) > MAX_LINE_CHARS:
            label = f"{pad}  {_inline(section.label)}:" if section.label else ""
            lang = "json" if section.label == "args" else "python" if section.style == "code" else "text"
            lines += ([label] if label else []) + [pad + "  " + line for line in _block(section.text, lang)]
        else:
            prefix = f"{_inline(section.label)}: " if section.label else ""
            lines.append(f"{pad}  - {prefix}{_inline(section.text)}")
    for child in node.children:
        lines += _node(child, level + 1)
    return lines


def _block(text: str, lang: str = "text") -> list[str]:
    if len(text) > MAX_BLOCK_CHARS:
        text = f"{text[:MAX_BLOCK_CHARS]}\n… [{len(text) - MAX_BLOCK_CHARS} more chars]"
    longest = max((len(run) for run in BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{lang}", *text.splitlines(), fence]


def _inline(text: str) -> str:
    """One line of plain text: HTML-escaped, Markdown punctuation backslash-escaped, newlines folded, clipped."""
    one = " ".join(str(text).split())
    if len(one) > MAX_LINE_CHARS:
        one = one[:MAX_LINE_CHARS] + "…"
    return INLINE_SPECIAL.sub(r"\\\1", html.escape(one, quote=False))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
