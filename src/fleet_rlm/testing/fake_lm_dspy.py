"""Text in the shape DSPy's ChatAdapter parses, so tests can script module outputs and RLM turns.

ChatAdapter reads ``[[ ## field ## ]]`` headers followed by the value and ends at ``[[ ## completed ## ]]``.
``dspy.RLM`` (dspy/predict/rlm.py) makes two kinds of adapter calls: the action step, whose outputs are
``reasoning`` and ``code`` (a fenced Python block), and, only when ``max_iters`` runs out, the extract step,
whose outputs are the user signature's own output fields. Code ends a run by calling
``SUBMIT(field=value, ...)``. Sub-LM calls (``llm_query``) are raw prompts: answer them with
``fake_lm_rules.sub_lm_rule``.

No dspy import here: these are pure string builders.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any


def format_field_value(value: Any) -> str:
    """How an LM writes a field value: strings as-is, anything else as JSON (what ChatAdapter parses)."""
    if isinstance(value, str):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    return json.dumps(value, ensure_ascii=False, default=str)


def dspy_fields(**fields: Any) -> str:
    """A ChatAdapter response with the given output fields, in order, ending with the completed marker."""
    parts = [f"[[ ## {name} ## ]]\n{format_field_value(value)}" for name, value in fields.items()]
    parts.append("[[ ## completed ## ]]")
    return "\n\n".join(parts)


def python_block(code: str) -> str:
    """Wrap code in a ```python fence, as RLM's action signature asks the model to."""
    return f"```python\n{textwrap.dedent(code).strip()}\n```"


def rlm_step(reasoning: str, code: str, *, fenced: bool = True) -> str:
    """One RLM action step: the model's ``reasoning`` and the ``code`` to run in the REPL."""
    return dspy_fields(reasoning=reasoning, code=python_block(code) if fenced else code)


def submit_code(**outputs: Any) -> str:
    """Python source that calls ``SUBMIT`` with literal values (``repr`` of each output)."""
    args = ", ".join(f"{name}={value!r}" for name, value in outputs.items())
    return f"SUBMIT({args})"


def rlm_submit(reasoning: str = "I have the answer.", **outputs: Any) -> str:
    """An RLM action step whose code immediately submits ``outputs`` (ends the run)."""
    return rlm_step(reasoning, submit_code(**outputs))


def rlm_extract(**outputs: Any) -> str:
    """The RLM extract step's response (used after max_iters): the signature's output fields."""
    return dspy_fields(**outputs)
