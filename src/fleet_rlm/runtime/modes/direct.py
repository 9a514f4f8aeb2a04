"""direct mode: one ChainOfThought answer over the context and history, no sandbox."""

from __future__ import annotations

import dspy

from fleet_rlm.runtime.callbacks import EventCallback
from fleet_rlm.runtime.context import LoadedContext
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.modes.outcome import ModeOutcome
from fleet_rlm.runtime.programs import DIRECT
from fleet_rlm.runtime.scope import TurnScope

DIRECT_CONTEXT_MAX_CHARS = 200_000


class DirectAnswer(dspy.Signature):
    task: str = dspy.InputField()
    context: str = dspy.InputField(desc="Documents the user attached (may be empty)")
    history: str = dspy.InputField(desc="Earlier turns of this conversation (may be empty)")
    answer: str = dspy.OutputField()


def run_direct(scope: TurnScope, emitter: Emitter, *, task: str, context: LoadedContext, history: str) -> ModeOutcome:
    spec = scope.program(DIRECT)
    program = dspy.ChainOfThought(DirectAnswer.with_instructions(spec.instructions))
    text = context.as_variable() if context.documents else ""
    callback = EventCallback(emitter, progress=scope.progress)
    with dspy.context(lm=scope.lms.get("root"), callbacks=[callback]):
        prediction = program(task=task, context=text[:DIRECT_CONTEXT_MAX_CHARS], history=history)
    answer = str(prediction.answer or "")
    return ModeOutcome(answer, {"answer": answer, "reasoning": prediction.get("reasoning", "")}, 0, False, spec.version)
