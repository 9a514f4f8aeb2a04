"""Signatures and tools of the per-turn `dspy.RLM`, built once per distinct shape instead of once per turn.

Every turn (and every child) builds a fresh `dspy.RLM`. Its constructor derives the action and extract
signatures from the task signature, the tool docs, the call budget and the interpreter's instructions. That is a
dozen pydantic model classes and ~10 ms of CPU per RLM (profiled: a sixth of a 5-iteration turn's own work).
Signature classes are immutable values (`with_instructions` and friends return new classes), so RLMs of the
same shape can share them. The derived signatures are kept in a small bounded table keyed by everything
`_build_signatures` reads. Likewise a `dspy.Tool` parses its function (a pydantic schema per argument) each time
it is made; `shared_tool` parses each of our own tool definitions once and binds the turn's closure to a copy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import dspy
from dspy.primitives.code_interpreter import resolve_interpreter_factory

MAX_SHAPES = 128  # distinct (instructions, tools, budget, runtime) shapes kept; the oldest goes first

# What `_build_signatures` also leaves on the RLM (dspy's forward reads them), restored on a shared hit.
_RULES = ("_initial_execution_instructions", "_initial_sub_agent_rules", "_initial_interpreter_rules")

_lock = threading.Lock()
_built: dict[tuple[Any, ...], tuple[Any, ...]] = {}


@lru_cache(maxsize=MAX_SHAPES)
def task_signature(instructions: str) -> type[dspy.Signature]:
    """The RLM task signature with the program registry's instructions (one class per distinct text)."""
    return dspy.Signature("task: str, context: str, history: str -> answer: str", instructions=instructions)


@lru_cache(maxsize=MAX_SHAPES)
def with_instructions(signature: type[dspy.Signature], instructions: str) -> type[dspy.Signature]:
    """`signature.with_instructions(instructions)`, shared by every RLM that asks for the same pair."""
    return signature.with_instructions(instructions)


_tools: dict[Any, dspy.Tool] = {}


def shared_tool(func: Callable[..., Any]) -> dspy.Tool:
    """A `dspy.Tool` of `func`, parsed once per `def` (keyed by its code object).

    Only for tools defined in our own code as plain nested functions: every closure of one `def` has the same
    name, docstring and annotations. Tools with per-instance metadata (MCP) are made with `dspy.Tool` directly.
    """
    template = _tools.get(func.__code__)
    if template is None:
        template = _tools[func.__code__] = dspy.Tool(func)
    return template.model_copy(update={"func": func})


class SharedSignatureRLM(dspy.RLM):
    """`dspy.RLM` whose derived signatures come from the shared table (same behaviour, built once per shape)."""

    def _build_signatures(self) -> tuple[Any, Any]:
        factory = resolve_interpreter_factory(self._interpreter_factory)
        key = (
            self.signature,
            self._format_tool_docs(self._user_tools),
            self.max_llm_calls,
            self._get_execution_instructions(factory),
        )
        hit = _built.get(key)
        if hit is None:
            action, extract = super()._build_signatures()
            hit = (action, extract, tuple(getattr(self, name) for name in _RULES))
            with _lock:
                while len(_built) >= MAX_SHAPES:
                    _built.pop(next(iter(_built)))
                _built[key] = hit
            return action, extract
        action, extract, rules = hit
        for name, value in zip(_RULES, rules, strict=True):
            setattr(self, name, value)
        return action, extract
