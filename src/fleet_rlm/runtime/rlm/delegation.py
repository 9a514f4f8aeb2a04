"""rlm_query / rlm_query_batched: hand a sub-task to a child RLM with its own sandbox.

Depth-limited: an actor at depth d may spawn children at d+1 <= max_depth; at the limit the call degrades to
a plain sub-LM call and says so with a warning event. Children share the turn's TurnControl (one LM-call
budget for the whole tree), get the parent's context by reference unless given their own, and emit through a
child emitter (actor child:<id>, parent_id <id>, their depth). Batched children run in parallel up to the
turn's batch_concurrency.
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from fleet_rlm.events import ChildEnd, ChildProgress, ChildStart, WarningEvent, preview
from fleet_rlm.runtime.emitter import Emitter
from fleet_rlm.runtime.errors import TurnStop
from fleet_rlm.runtime.rlm.signatures import shared_tool
from fleet_rlm.runtime.rlm.subcalls import SubLM

if TYPE_CHECKING:
    from fleet_rlm.runtime.scope import TurnScope

MAX_PLAIN_CONTEXT_CHARS = 100_000


class Delegation:
    def __init__(
        self, scope: TurnScope, emitter: Emitter, *, depth: int, context: str, run_child: Callable[..., Any]
    ) -> None:
        self.scope = scope
        self.emitter = emitter
        self.depth = depth
        self.context = context
        self._run_child = run_child

    def rlm_query(self, task: str, context: str | None = None) -> str:
        if not isinstance(task, str) or not task.strip():
            raise ValueError("rlm_query needs a non-empty task string")
        shared = self.context if context is None else str(context)
        child_depth = self.depth + 1
        if child_depth > self.scope.control.limits.max_depth:
            return self._plain(task, shared, child_depth)
        child_id = uuid.uuid4().hex[:12]
        self.emitter.emit(ChildStart, child_id=child_id, task_preview=preview(task, 500), child_depth=child_depth)
        child = self.emitter.child(child_id, child_depth)

        def progress(iteration: int) -> None:
            self.emitter.emit(ChildProgress, child_id=child_id, iteration=iteration)

        try:
            outcome = self._run_child(
                self.scope,
                child,
                task=task,
                context=shared,
                history="",
                depth=child_depth,
                session_id=None,
                on_iteration=progress,
            )
        except TurnStop as stop:
            self.emitter.emit(ChildEnd, child_id=child_id, ok=False, error=str(stop))
            raise
        except Exception as exc:
            self.emitter.emit(ChildEnd, child_id=child_id, ok=False, error=f"{type(exc).__name__}: {exc}"[:500])
            raise RuntimeError(f"the child agent failed: {type(exc).__name__}: {exc}") from exc
        self.emitter.emit(ChildEnd, child_id=child_id, ok=True, answer_preview=preview(outcome.answer, 500))
        return str(outcome.answer)

    def _plain(self, task: str, context: str, child_depth: int) -> str:
        limit = self.scope.control.limits.max_depth
        self.emitter.emit(
            WarningEvent,
            code="max_depth",
            message=f"rlm_query at depth {self.depth} would exceed max_depth {limit}; answered by a plain sub-LM call",
        )
        prompt = task if not context else f"{task}\n\nContext:\n{context[:MAX_PLAIN_CONTEXT_CHARS]}"
        return SubLM(self.scope.lms.get("sub"), self.scope.control, self.emitter).query(prompt)

    def rlm_query_batched(self, tasks: list[str], contexts: list[str] | None = None) -> list[str]:
        if not isinstance(tasks, list) or not tasks:
            raise ValueError("rlm_query_batched needs a non-empty list of task strings")
        if contexts is not None and len(contexts) != len(tasks):
            raise ValueError("contexts must be None or have one entry per task")
        workers = max(1, min(self.scope.control.limits.batch_concurrency, len(tasks)))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rlm-child")
        try:
            futures = [
                pool.submit(
                    contextvars.copy_context().run, self.rlm_query, task, None if contexts is None else contexts[i]
                )
                for i, task in enumerate(tasks)
            ]
            results: list[str] = []
            for future in futures:
                try:
                    results.append(future.result())
                except TurnStop:
                    raise
                except Exception as exc:
                    results.append(f"[ERROR] {exc}")
            return results
        finally:
            # On a stop (budget, cancel, deadline) the children already running stop at their next check; waiting
            # for them keeps every child's events before the parent's summary and terminal event.
            pool.shutdown(wait=True, cancel_futures=True)

    def tools(self) -> list[Any]:
        def rlm_query(task: str, context: str | None = None) -> str:
            """Hand a self-contained sub-task to a child agent with its own REPL; `context` defaults to yours."""
            return self.rlm_query(task, context)

        def rlm_query_batched(tasks: list[str], contexts: list[str] | None = None) -> list[str]:
            """Run several child agents in parallel; returns their answers in order."""
            return self.rlm_query_batched(tasks, contexts)

        return [shared_tool(rlm_query), shared_tool(rlm_query_batched)]
