"""A fake LM world for optimization tests: a "student" that is right only once GEPA's reflection has taught it.

The reflection prompt (a raw prompt, no DSPy adapter framing) is answered with instructions containing
TAUGHT; adapter requests whose system message contains TAUGHT answer from the hint embedded in the task
("[mode=rlm]", "[answer=42]"); untaught ones answer wrong.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fleet_rlm.testing import FakeLMServer, RecordedRequest, adapter_fields_rule

TAUGHT = "TAUGHT: read the hint in brackets and answer with it."
_HINT = re.compile(r"\[(\w+)=([^\]]+)\]")


def _choose(field: str, request: RecordedRequest) -> Any:
    taught = TAUGHT in request.system_text
    hints: dict[str, str] = {}
    for key, value in _HINT.findall(request.last_user_text):  # the task's hint, not the history's
        hints.setdefault(key, value)
    if field in hints:
        return hints[field] if taught else ("direct" if field == "mode" else "wrong answer")
    return None


def reflection_rule(request: RecordedRequest) -> str | None:
    """dspy.GEPA's reflection (ProposeInstruction, formatted by JSONAdapter) answered with TAUGHT."""
    if "`new_instruction`" in request.system_text:
        return json.dumps({"new_instruction": TAUGHT})
    return None


def teaching_lm() -> FakeLMServer:
    return FakeLMServer(rules=[reflection_rule, adapter_fields_rule(answer="wrong answer", choose=_choose)])


def router_rows(n: int) -> list[dict[str, Any]]:
    modes = ["rlm", "tools", "direct"]
    return [{"task": f"task {i} [mode={modes[i % 3]}]", "mode": modes[i % 3]} for i in range(n)]


def direct_rows(n: int) -> list[dict[str, Any]]:
    return [{"task": f"what is {i} squared? [answer={i * i}]", "answer": str(i * i)} for i in range(n)]


def stubborn_lm() -> FakeLMServer:
    """Reflection proposes an instruction that teaches nothing: the candidate scores what the baseline did."""

    def useless(request: RecordedRequest) -> str | None:
        if "`new_instruction`" in request.system_text:
            return json.dumps({"new_instruction": "Answer carefully."})
        return None

    return FakeLMServer(rules=[useless, adapter_fields_rule(answer="wrong answer", choose=_choose)])
