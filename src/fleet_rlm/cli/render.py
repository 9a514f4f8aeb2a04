"""Render a run's events in the terminal with rich, as they arrive.

One `TurnRenderer` per turn. Trace modes: `verbose` shows every step in full (code highlighted), `compact`
folds reasoning, code and output to one line each, `off` shows only the answer (and failures). Children's
events are indented by depth ("│ " per level) so nested RLMs read as lanes; sub-LM batches show k/N done.
The renderer never talks to the server: it only turns events into lines and remembers the outcome.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.padding import Padding
from rich.syntax import Syntax
from rich.text import Text

from fleet_rlm.cli.batches import BatchTracker
from fleet_rlm.events import Event

TraceMode = Literal["compact", "verbose", "off"]
TRACE_MODES: tuple[str, ...] = ("compact", "verbose", "off")
FOLD_CHARS = 100


@dataclass
class TurnOutcome:
    """What a turn ended with: the CLI's exit code and JSON output are made from this."""

    status: str = "unknown"
    answer: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    run_id: str | None = None
    session_id: str | None = None
    duration_ms: int = 0
    outcome: str | None = None  # complete | partial (a succeeded turn a budget stopped)
    stop_reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "succeeded"

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "answer": self.answer,
            "run_id": self.run_id,
            "session_id": self.session_id,
            "usage": self.usage,
            "error": self.error,
            "duration_ms": self.duration_ms,
            "outcome": self.outcome,
            "stop_reason": self.stop_reason,
        }


def fold(text: str, limit: int = FOLD_CHARS) -> str:
    """First non-empty line, cut to `limit`, with a count of what was folded away."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    first = lines[0].strip()
    more = len(lines) - 1
    if len(first) > limit:
        first = first[: limit - 1] + "…"
    return f"{first}  (+{more} lines)" if more else first


def footer_text(usage: dict[str, Any], elapsed_s: float) -> str:
    tokens_in = int(usage.get("tokens_in", 0) or 0)
    tokens_out = int(usage.get("tokens_out", 0) or 0)
    cost = float(usage.get("cost_usd", 0.0) or 0.0)
    known = usage.get("cost_known", True)
    cost_text = f"${cost:.4f}" if known or cost else "cost n/a"
    calls = int(usage.get("lm_calls", 0) or 0)
    return (
        f"tokens {tokens_in:,} in / {tokens_out:,} out · {cost_text}"
        f"{'' if known else ' (some calls unpriced)'} · {calls} LM call{'s' if calls != 1 else ''}"
        f" · {elapsed_s:.1f}s"
    )


class TurnRenderer:
    def __init__(self, console: Console, trace: TraceMode = "compact", *, show_answer: bool = True) -> None:
        self.console = console
        self.trace = trace
        self.show_answer = show_answer
        self.outcome = TurnOutcome()
        self.started = time.monotonic()
        self.batches = BatchTracker(console, enabled=trace != "off")

    # --- output helpers ------------------------------------------------------------------------------------
    def _line(self, depth: int, text: str, style: str = "") -> None:
        prefix = Text("│ " * depth, style="dim")
        self.console.print(prefix + Text(text, style=style), soft_wrap=False, overflow="fold")

    def _block(self, depth: int, renderable: Any) -> None:
        """A multi-line block (code, output, reasoning), indented under its lane."""
        self.console.print(Padding(renderable, (0, 0, 0, 2 * depth)) if depth else renderable)

    def _trace(self, mode: TraceMode) -> bool:
        """Show this step in the current trace mode? verbose ⊃ compact ⊃ off."""
        order = {"off": 0, "compact": 1, "verbose": 2}
        return order[self.trace] >= order[mode]

    # --- dispatch ------------------------------------------------------------------------------------------
    def handle(self, event: Event) -> None:
        self.outcome.run_id = self.outcome.run_id or event.run_id
        self.outcome.session_id = self.outcome.session_id or event.session_id
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is not None:
            handler(event)

    def _on_turn_queued(self, event: Any) -> None:
        if self._trace("compact"):
            self._line(0, f"· queued: waiting for a worker ({event.queue})", "dim")

    def _on_turn_started(self, event: Any) -> None:
        if self._trace("verbose"):
            self._line(0, f"▶ turn started (mode {event.requested_mode})", "dim")

    def _on_status(self, event: Any) -> None:
        if self._trace("compact"):
            self._line(event.depth, f"· {event.message}", "dim")

    def _on_route_decision(self, event: Any) -> None:
        if self._trace("compact"):
            self._line(event.depth, f"→ mode {event.mode}: {fold(event.reason)}", "cyan")

    def _on_context_loaded(self, event: Any) -> None:
        if self._trace("compact"):
            cut = " (truncated)" if event.truncated else ""
            self._line(event.depth, f"+ context {event.source}: {event.name} ({event.chars:,} chars){cut}", "dim")

    def _on_reasoning(self, event: Any) -> None:
        if self._trace("verbose"):
            self._line(event.depth, f"∴ reasoning (iteration {event.iteration})", "magenta")
            self._block(event.depth, Text(event.text.strip(), style="italic"))
        elif self._trace("compact"):
            self._line(event.depth, f"∴ {fold(event.text)}", "magenta")

    def _on_code(self, event: Any) -> None:
        if self._trace("verbose"):
            self._line(event.depth, f"▸ code (iteration {event.iteration})", "blue")
            self._block(event.depth, Syntax(event.code.rstrip(), "python", theme="ansi_dark"))
        elif self._trace("compact"):
            self._line(event.depth, f"▸ {fold(event.code)}", "blue")

    def _on_output(self, event: Any) -> None:
        style = "red" if event.stream == "stderr" else ""
        if self._trace("verbose"):
            self._block(event.depth, Text(event.text.rstrip(), style=style))
            if event.omitted_chars:
                self._line(event.depth, f"… {event.omitted_chars:,} chars omitted", "dim")
        elif self._trace("compact") and event.text.strip():
            self._line(event.depth, f"◂ {fold(event.text)}", style or "dim")

    def _on_tool_call(self, event: Any) -> None:
        if self._trace("compact"):
            args = ", ".join(f"{key}={value!r}" for key, value in event.args.items())
            self._line(event.depth, f"⚙ {event.name}({fold(args, 80)})", "yellow")

    def _on_tool_result(self, event: Any) -> None:
        if not self._trace("compact"):
            return
        if event.ok:
            self._line(event.depth, f"  ✓ {event.name or 'tool'}: {fold(event.result_preview)}", "dim")
        else:
            self._line(event.depth, f"  ✗ {event.name or 'tool'}: {fold(event.error or 'failed')}", "red")

    def _on_sub_lm_start(self, event: Any) -> None:
        if event.batch_id:
            self.batches.started(event)
        elif self._trace("verbose"):
            self._line(event.depth, f"↳ sub-LM {event.model}: {fold(event.prompt_preview, 80)}", "cyan")

    def _on_sub_lm_end(self, event: Any) -> None:
        if self.batches.ended(event):
            return
        if not event.ok and self._trace("compact"):
            self._line(event.depth, f"↳ sub-LM failed: {fold(event.error or '')}", "red")
        elif self._trace("verbose"):
            self._line(event.depth, f"↳ sub-LM done in {event.latency_ms} ms: {fold(event.response_preview)}", "dim")

    def _on_child_start(self, event: Any) -> None:
        if self._trace("compact"):
            label = f"┌ child {event.child_id[:8]} (depth {event.child_depth}): {fold(event.task_preview, 80)}"
            self._line(event.depth, label, "green")

    def _on_child_progress(self, event: Any) -> None:
        if self._trace("verbose"):
            note = f": {fold(event.note)}" if event.note else ""
            self._line(event.depth + 1, f"iteration {event.iteration}{note}", "dim")

    def _on_child_end(self, event: Any) -> None:
        if not self._trace("compact"):
            return
        if event.ok:
            self._line(event.depth, f"└ child {event.child_id[:8]} ✓ {fold(event.answer_preview, 80)}", "green")
        else:
            self._line(event.depth, f"└ child {event.child_id[:8]} ✗ {fold(event.error or 'failed')}", "red")

    def _on_warning(self, event: Any) -> None:
        if self._trace("compact"):
            self._line(event.depth, f"⚠ {event.message} [{event.code}]", "yellow")

    def _on_budget_exhausted(self, event: Any) -> None:
        if self._trace("compact"):
            self._line(event.depth, f"⚠ budget {event.budget} reached ({event.used:g}/{event.limit:g})", "yellow")

    def _on_sandbox_reset(self, event: Any) -> None:
        if self._trace("compact"):
            self._line(event.depth, f"⚠ sandbox reset, REPL state lost: {event.reason}", "yellow")

    def _on_error(self, event: Any) -> None:
        if self._trace("compact") and not event.fatal:
            action = f" — {event.action}" if event.action else ""
            self._line(event.depth, f"✗ error[{event.code}]: {event.message}{action}", "red")

    def _on_artifact_created(self, event: Any) -> None:
        if self._trace("compact"):
            self._line(event.depth, f"⬇ artifact {event.path} ({event.size_bytes:,} bytes)", "green")

    def _on_memory_updated(self, event: Any) -> None:
        if self._trace("compact"):
            self._line(event.depth, f"✎ memory {event.path} (+{event.chars_appended:,} chars)", "green")

    def _on_summary(self, event: Any) -> None:
        if self._trace("verbose"):
            self._line(event.depth, f"summary: {fold(event.text)}", "dim")

    def _on_usage(self, event: Any) -> None:
        if event.depth == 0:
            self.outcome.usage = event.model_dump(mode="json", include=_USAGE_FIELDS)

    def _on_final(self, event: Any) -> None:
        if event.depth == 0:
            self.outcome.answer = event.answer

    # --- terminal events -----------------------------------------------------------------------------------
    def _on_turn_finished(self, event: Any) -> None:
        self._end("succeeded", event)
        self.outcome.outcome, self.outcome.stop_reason = event.outcome, event.stop_reason
        if event.outcome == "partial" and self._trace("compact"):
            why = f"the {event.stop_reason} budget" if event.stop_reason else "a budget"
            self.console.print(Text(f"◐ partial answer: {why} stopped the turn early", style="yellow"))
        if self.show_answer:
            self.console.print()
            self.console.print(Markdown(self.outcome.answer or "_(empty answer)_"))
        self._footer()

    def _on_turn_failed(self, event: Any) -> None:
        self._end("failed", event)
        self.outcome.error = {"code": event.code, "message": event.message, "action": event.action}
        action = f" — {event.action}" if event.action else ""
        self.console.print(Text(f"✗ turn failed: error[{event.code}]: {event.message}{action}", style="bold red"))
        self._footer()

    def _on_turn_cancelled(self, event: Any) -> None:
        self._end("cancelled", event)
        self.outcome.error = {"code": "cancelled", "message": event.reason, "action": None}
        self.console.print(Text(f"■ turn cancelled ({event.reason}); the session is kept", style="yellow"))
        self._footer()

    def _on_turn_interrupted(self, event: Any) -> None:
        self._end("interrupted", event)
        self.outcome.error = {"code": "interrupted", "message": event.reason, "action": "send the message again"}
        self.console.print(Text(f"■ turn interrupted: {escape(event.reason)}", style="yellow"))

    def _end(self, status: str, event: Any) -> None:
        self.batches.close()
        self.outcome.status = status
        duration = getattr(event, "duration_ms", 0) or 0
        self.outcome.duration_ms = duration or int((time.monotonic() - self.started) * 1000)

    def _footer(self) -> None:
        if self._trace("compact"):
            self.console.print(Text(footer_text(self.outcome.usage, self.outcome.duration_ms / 1000), style="dim"))


_USAGE_FIELDS = {"tokens_in", "tokens_out", "cost_usd", "cost_known", "lm_calls", "iterations", "by_role"}
