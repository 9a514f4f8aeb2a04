"""`LatestStep`: the root actor's latest step, from which the answer of a turn a budget stopped is built.

When a budget or the time limit stops a turn, its answer is made from this note (the last reasoning and cell
output) and the result is `partial` with the budget as `stop_reason` (TurnResult, the run row, turn_finished),
so clients can say the answer is incomplete. Children do not write here: only the root's work is the answer.
"""

from __future__ import annotations

import threading

OUTPUT_CHARS = 4000


class LatestStep:
    """Thread-safe: the root's callbacks and the interpreter note from different threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reasoning = ""
        self.output = ""

    def note(self, *, reasoning: str | None = None, output: str | None = None) -> None:
        with self._lock:
            if reasoning:
                self.reasoning = reasoning
            if output:
                self.output = output

    def partial_answer(self, why: str) -> str:
        with self._lock:
            parts = [f"(Partial answer: the turn stopped early because {why}.)"]
            if self.reasoning:
                parts.append(f"Last step: {self.reasoning.strip()}")
            if self.output:
                parts.append(f"Last output:\n{self.output.strip()[:OUTPUT_CHARS]}")
        return "\n\n".join(parts)
