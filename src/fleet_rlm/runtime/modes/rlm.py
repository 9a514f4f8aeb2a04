"""rlm mode: one fresh `dspy.RLM` per turn (and per child) over an observed sandbox interpreter.

The root runs in the session's leased sandbox, so REPL state persists across the session's turns; children
(`rlm_query`) each get a fresh isolated sandbox and the parent's context by reference. Instructions come from
the program registry (rlm.task is the signature's instructions; rlm.action / rlm.extract, when set, replace the
action / extract predictors' full instructions).
"""

from __future__ import annotations

from typing import Any

import dspy

from fleet_rlm.events import BudgetExhausted
from fleet_rlm.runtime.callbacks import EventCallback
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.modes.outcome import ModeOutcome
from fleet_rlm.runtime.programs import RLM_ACTION, RLM_EXTRACT, RLM_TASK
from fleet_rlm.runtime.recording import ACTOR
from fleet_rlm.runtime.rlm.delegation import Delegation
from fleet_rlm.runtime.rlm.interpreter import ObservedFactory, ObservedInterpreter
from fleet_rlm.runtime.rlm.signatures import SharedSignatureRLM, task_signature, with_instructions
from fleet_rlm.runtime.rlm.subcalls import SubLM
from fleet_rlm.runtime.scope import TurnScope

EXTRACT_MARKER = "Extract forced final output"


def build_rlm(scope: TurnScope, factory: ObservedFactory, tools: list[Any], sub_lm: dspy.BaseLM) -> tuple[Any, str]:
    task_spec = scope.program(RLM_TASK)
    limits = scope.control.limits
    rlm = SharedSignatureRLM(
        task_signature(task_spec.instructions),
        max_iters=limits.max_iters,
        max_llm_calls=limits.max_llm_calls,
        max_output_chars=limits.max_output_chars,
        tools=tools,
        sub_lm=sub_lm,
        interpreter_factory=factory,
    )
    action = scope.program(RLM_ACTION)
    if action.instructions:
        rlm.generate_action.signature = with_instructions(rlm.generate_action.signature, action.instructions)
    extract = scope.program(RLM_EXTRACT)
    if extract.instructions:
        rlm.extract.signature = with_instructions(rlm.extract.signature, extract.instructions)
    return rlm, action.version if action.instructions else task_spec.version


def run_rlm(
    scope: TurnScope,
    emitter: Emitter,
    *,
    task: str,
    context: str,
    history: str,
    depth: int,
    session_id: str | None,
    on_iteration: Any = None,
) -> ModeOutcome:
    """Run one RLM actor to completion. Raises TurnStop when the turn stops (cancel or budget)."""
    root_lm = scope.lms.get("root" if depth == 0 else "delegate")
    sub_lm = scope.lms.get("sub")
    sub = SubLM(sub_lm, scope.control, emitter)
    delegation = Delegation(scope, emitter, depth=depth, context=context, run_child=run_rlm)
    is_root = depth == 0

    def iteration_done(iteration: int) -> None:
        if on_iteration is not None:
            on_iteration(iteration)

    def make(inner: Any) -> ObservedInterpreter:
        first_root = is_root and not factory.created  # the turn's root REPL (not a later forward's)
        resume = scope.resume if first_root else None
        return ObservedInterpreter(
            inner,
            control=scope.control,
            emitter=emitter,
            llm_tools=sub.tools(),
            watcher=scope.watcher,
            on_iteration=iteration_done,
            progress=scope.progress if is_root else None,
            snapshots=emitter.record,
            restore=resume.restore if resume is not None else scope.restore if first_root else None,
            replayed=resume.cells if resume is not None else (),
            on_live=scope.on_live if resume is not None else None,
        )

    factory = ObservedFactory(scope.sandbox_factory(session_id=session_id), make)
    rlm, version = build_rlm(scope, factory, delegation.tools() + scope.mcp_tools(), sub_lm)

    def next_iteration() -> int:
        return (factory.created[-1].iteration if factory.created else 0) + 1

    progress = scope.progress if is_root else None
    callback = EventCallback(emitter, iteration=next_iteration, progress=progress, lm_iteration=next_iteration)
    actor = ACTOR.set((emitter.actor, depth))  # recorded LM exchanges name the actor that made them
    try:
        with dspy.context(lm=root_lm, callbacks=[callback]):
            prediction = rlm(task=task, context=context, history=history)
    finally:
        ACTOR.reset(actor)
    iterations = factory.created[-1].iteration if factory.created else 0
    hit_max = getattr(prediction, "final_reasoning", "") == EXTRACT_MARKER
    if hit_max:
        limit = scope.control.limits.max_iters
        emitter.emit(BudgetExhausted, budget="max_iters", limit=limit, used=iterations)
    answer = str(getattr(prediction, "answer", "") or "")
    return ModeOutcome(answer, {"answer": answer}, iterations, hit_max, version)
