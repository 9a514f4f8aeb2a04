"""Choose the execution mode of a turn (auto): rules first, then a cheap router LM call.

Contexts of at least `settings.rlm_context_threshold_chars` always go to rlm without any LM call: nothing else
can read them. Otherwise the router role's LM picks direct, tools or rlm from the task and a description of the
context. The choice and its reason become a route_decision event (emitted by the runner). When the router's
answer cannot be parsed, a turn with context falls back to rlm (which reads all of it), one without to direct.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import dspy

from fleet_rlm.runtime.context import LoadedContext
from fleet_rlm.runtime.errors import TurnStop
from fleet_rlm.runtime.programs import ROUTER
from fleet_rlm.runtime.scope import TurnScope

Mode = Literal["direct", "tools", "rlm"]


@dataclass(frozen=True)
class Route:
    mode: Mode
    reason: str
    used_lm: bool = False


class RouteTurn(dspy.Signature):
    """Choose how to handle the user's task."""

    task: str = dspy.InputField()
    context: str = dspy.InputField(desc="What the user attached: names and sizes")
    mode: Literal["direct", "tools", "rlm"] = dspy.OutputField()
    reason: str = dspy.OutputField(desc="One short sentence")


def describe(context: LoadedContext) -> str:
    if not context.documents:
        return "nothing attached"
    items = ", ".join(f"{d.name} ({d.kind}, {d.chars} chars)" for d in context.documents[:20])
    return f"{len(context.documents)} documents, {context.total_chars} chars in total: {items}"


def route(scope: TurnScope, *, requested: str, task: str, context: LoadedContext) -> Route:
    if requested in ("direct", "tools", "rlm"):
        return Route(requested, f"execution mode {requested} was requested")  # type: ignore[arg-type]
    threshold = scope.settings.rlm_context_threshold_chars
    if context.total_chars >= threshold:
        return Route("rlm", f"the context has {context.total_chars} chars, at least the rlm threshold of {threshold}")
    spec = scope.program(ROUTER)
    predictor = dspy.Predict(RouteTurn.with_instructions(spec.instructions))
    try:
        with dspy.context(lm=scope.lms.get("router")):
            choice = predictor(task=task, context=describe(context))
    except TurnStop:
        raise
    except Exception as exc:  # a router that cannot answer must not fail the turn
        return fallback_route(context, f"the router's answer could not be used ({type(exc).__name__})")
    if choice.mode not in ("direct", "tools", "rlm"):
        return fallback_route(context, f"the router answered an unknown mode {str(choice.mode)[:40]!r}")
    return Route(choice.mode, str(choice.reason or "chosen by the router").strip(), True)


def fallback_route(context: LoadedContext, why: str) -> Route:
    """No usable router answer: with context attached rlm (it can read all of it), else direct."""
    if context.documents:
        return Route("rlm", f"{why}; context is attached, so falling back to rlm, which can read all of it", True)
    return Route("direct", f"{why}; nothing is attached, so falling back to direct", True)
