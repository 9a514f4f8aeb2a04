"""tools mode: DSPy ReAct over the host tools (attachments, URLs, workspace files, memory, delegate_to_rlm)."""

from __future__ import annotations

import dspy

from fleet_rlm.runtime.callbacks import EventCallback
from fleet_rlm.runtime.context import LoadedContext
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.host_tools import HostTools
from fleet_rlm.runtime.modes.outcome import ModeOutcome
from fleet_rlm.runtime.modes.rlm import run_rlm
from fleet_rlm.runtime.modes.router import describe
from fleet_rlm.runtime.programs import TOOLS
from fleet_rlm.runtime.scope import TurnScope
from fleet_rlm.runtime.workspace import Memory


class ToolsAnswer(dspy.Signature):
    task: str = dspy.InputField()
    attachments: str = dspy.InputField(desc="Names and sizes of attached documents (read them with the tools)")
    history: str = dspy.InputField(desc="Earlier turns of this conversation (may be empty)")
    answer: str = dspy.OutputField()


def run_tools(scope: TurnScope, emitter: Emitter, *, task: str, context: LoadedContext, history: str) -> ModeOutcome:
    spec = scope.program(TOOLS)
    memory = Memory(scope.workspace_root, emitter)

    def delegate(sub_task: str) -> str:
        text = context.as_variable() if context.documents else ""
        outcome = run_rlm(
            scope, emitter, task=sub_task, context=text, history=history, depth=0, session_id=scope.session_id
        )
        return outcome.answer

    tools = HostTools(scope, context, memory, delegate)
    program = dspy.ReAct(
        ToolsAnswer.with_instructions(spec.instructions),
        tools=tools.tools() + scope.mcp_tools(),
        max_iters=scope.control.limits.max_iters,
    )
    steps = {"n": 0}

    def iteration() -> int:
        steps["n"] += 1
        return steps["n"]

    callback = EventCallback(emitter, iteration=iteration, progress=scope.progress)
    with dspy.context(lm=scope.lms.get("root"), callbacks=[callback]):
        prediction = program(task=task, attachments=describe(context), history=history)
    scope.watcher.scan(emitter)
    answer = str(prediction.answer or "")
    return ModeOutcome(answer, {"answer": answer}, steps["n"], False, spec.version)
