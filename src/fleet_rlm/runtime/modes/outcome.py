"""`ModeOutcome`: what every execution mode (direct, tools, rlm) hands back to the turn runner."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class ModeOutcome:
    answer: str
    fields: dict[str, Any]
    iterations: int
    hit_max_iters: bool
    version: str
