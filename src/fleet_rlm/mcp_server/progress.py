"""One short line per run event for MCP progress notifications (`message`), so an agent or IDE can show
what the run is doing without knowing the event vocabulary. The full event stays readable with `run_events`."""

from __future__ import annotations

from typing import Any

MAX_LINE = 200


def _clip(value: Any, limit: int = 120) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(event: dict[str, Any]) -> str:
    """`type: detail` for one event (the client-visible JSON of any kind)."""
    kind = str(event.get("type", "event"))
    detail = ""
    if kind == "turn_started":
        detail = f"mode {event.get('requested_mode', 'auto')}"
    elif kind == "route_decision":
        detail = f"{event.get('mode')} ({_clip(event.get('reason'), 80)})"
    elif kind == "status":
        detail = _clip(event.get("message"))
    elif kind == "context_loaded":
        detail = f"{event.get('source')} {_clip(event.get('name'), 80)} ({event.get('chars', 0)} chars)"
    elif kind in ("code", "reasoning"):
        detail = f"iteration {event.get('iteration', 0)}: {_clip(event.get('code') or event.get('text'))}"
    elif kind == "output":
        detail = _clip(event.get("text"))
    elif kind == "tool_call":
        detail = str(event.get("name", ""))
    elif kind == "tool_result":
        detail = f"{event.get('name', '')} {'ok' if event.get('ok') else 'error: ' + _clip(event.get('error'), 80)}"
    elif kind == "sub_lm_start":
        detail = _clip(event.get("prompt_preview"), 80)
    elif kind in ("child_start", "child_end", "child_progress"):
        detail = f"child {event.get('child_id')}"
    elif kind == "final":
        detail = _clip(event.get("answer"))
    elif kind in ("error", "warning", "turn_failed"):
        detail = f"{event.get('code')}: {_clip(event.get('message'))}"
    elif kind == "budget_exhausted":
        detail = f"{event.get('budget')} ({event.get('used')}/{event.get('limit')})"
    elif kind in ("turn_cancelled", "turn_interrupted"):
        detail = _clip(event.get("reason"))
    line = f"{kind}: {detail}" if detail else kind
    return line[:MAX_LINE]
