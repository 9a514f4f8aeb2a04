"""Execute one run in the background: a job (claimed, beating; services/jobs), the runtime on a worker thread,
then commit the turn.

Whatever happens inside the runtime, the run ends in a final status with a terminal event, and the turn's
answer is committed (in the event writer's transaction, with the event) before that event is delivered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from fleet_rlm.events import ErrorEvent, EventBase, TurnCancelled, TurnFailed, TurnFinished, TurnInterrupted
from fleet_rlm.runtime.contracts import CancelToken, TurnRequest, TurnResult
from fleet_rlm.services.jobs.job import Job
from fleet_rlm.services.turns.final_writes import FinalWrites
from fleet_rlm.services.turns.held_sources import added_rows
from fleet_rlm.services.turns.inputs import TurnInput
from fleet_rlm.services.turns.recorder import RunRecorder
from fleet_rlm.services.turns.recovery import TurnJobs
from fleet_rlm.services.turns.run_deps import SHUTDOWN_REASON, Caller, RunDeps
from fleet_rlm.services.turns.sources import TurnReads, build_turn_request, rebuild_turn
from fleet_rlm.store.models import ChatSession, Run
from fleet_rlm.store.repos import runs as runs_repo
from fleet_rlm.store.repos.runs import FinalStatus

log = logging.getLogger(__name__)


async def execute_run(
    service: RunDeps,
    caller: Caller,
    run: Run,
    data: TurnInput,
    token: CancelToken,
    chat: ChatSession,
    reads: TurnReads,
    request: TurnRequest | None = None,
) -> None:
    """`chat` and `reads` are what `start` read with the run (the session row, `sources.TurnReads`): the turn
    reaches the runtime without another read. `request` is a resumed run's (services/turns/resume.py)."""

    async def build() -> tuple[TurnRequest, TurnReads]:
        return (request if request is not None else build_turn_request(service, caller, run, data, chat, reads)), reads

    await _execute(service, run, token, build)


async def execute_queued_run(service: RunDeps, run: Run, token: CancelToken) -> None:
    """A run a queue worker claimed: its request is rebuilt from the database (`sources.rebuild_turn`: the input
    kept with the run, its workspace, the caller's LM profiles and keys, program versions, held sources)."""

    async def build() -> tuple[TurnRequest, TurnReads]:
        async with service.database.session() as session:
            caller, data, chat, reads = await rebuild_turn(session, service.settings, run)
        return build_turn_request(service, caller, run, data, chat, reads), reads

    await _execute(service, run, token, build)


async def _execute(
    service: RunDeps, run: Run, token: CancelToken, build: Callable[[], Awaitable[tuple[TurnRequest, TurnReads]]]
) -> None:
    telemetry = service.telemetry
    trace = telemetry.start_run(run_id=run.id, session_id=run.session_id, user_id=run.user_id) if telemetry else None
    recorder = RunRecorder(
        service.writer,
        service.bus,
        run_id=run.id,
        session_id=run.session_id,
        user_id=run.user_id,
        observer=trace.observe if trace is not None else None,
        last_seq=run.last_seq,
        fence=(run.owner, run.claim_epoch) if run.owner else None,  # every write proves the claim still holds
    )
    job = Job(
        TurnJobs(service.database, service.bus),
        service.database,
        service.bus,
        job_id=run.id,
        owner=service.owner,
        heartbeats=service.heartbeats,
        on_cancel=lambda: token.cancel("cancelled by request"),  # a cancel that reached the database, not the bus
    )
    result: TurnResult
    built: tuple[TurnRequest, TurnReads] | None = None
    try:
        async with job.running(claimed=True):  # created running here (inline), or claimed by this queue worker
            if trace is not None and trace.sampled:
                async with service.database.transaction() as session:
                    await runs_repo.set_run_trace(
                        session, run_id=run.id, trace_id=trace.trace_id, span_id=trace.span_id
                    )
            built = await build()
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(service.threads, service.runtime.run_turn, built[0], recorder, token)
    except Exception as exc:  # the runtime reports its own failures; this is everything around it
        log.exception("run %s failed outside the runtime", run.id)
        error = {"code": getattr(exc, "code", "internal_error"), "message": str(exc) or type(exc).__name__}
        action = getattr(exc, "action", None)
        recorder.emit(ErrorEvent(run_id=run.id, session_id=run.session_id, actor="runner", action=action, **error))
        result = TurnResult(status="failed", error={**error, "action": action})
    await recorder.close()
    if not result.usage and recorder.usage:  # failed outside the runtime: report what was spent so far
        result.usage = recorder.usage
    added: list[dict[str, Any]] = []  # what the turn loaded joins the session, whatever its outcome
    if built is not None:  # (the user gave it to the session)
        request, reads = built
        index = reads.index_of(run.turn_id)
        added = added_rows(request.sources, recorder.loaded, session_id=run.session_id, run_id=run.id, turn_index=index)
    if run.id in service.interrupting and result.status != "succeeded":  # stopped by a server shutdown
        envelope = {"run_id": run.id, "session_id": run.session_id, "actor": "runner"}
        interrupted = TurnInterrupted(**envelope, reason=SHUTDOWN_REASON)
        result.error = {"code": "interrupted", "message": SHUTDOWN_REASON}
        await _commit(service, recorder, run, result, interrupted, added, status="interrupted")
        if trace is not None:
            trace.finish(interrupted)
        return
    terminal = terminal_event(run, result, recorder.terminal)
    await _commit(service, recorder, run, result, terminal, added)
    if trace is not None:
        trace.finish(terminal)


async def _commit(
    service: RunDeps,
    recorder: RunRecorder,
    run: Run,
    result: TurnResult,
    terminal: EventBase,
    added: list[dict[str, Any]],
    status: str | None = None,
) -> None:
    """Answer, final status and the terminal event in one transaction (the event writer's); then it is delivered."""
    if status is None:
        status = result.status if result.status in ("succeeded", "failed", "cancelled") else "failed"
    final_status = status

    writes = FinalWrites(
        session_id=run.session_id,
        status=FinalStatus(
            run_id=run.id,
            status=final_status,
            error=result.error,
            usage=result.usage or None,
            outcome=result.outcome,
            stop_reason=result.stop_reason,
            program_version=result.program_version or None,  # promoted optimizations show here
        ),
        turn_id=run.turn_id,
        answer=result.answer or None,
        summary=result.summary,
        sources=tuple(added),
    )
    if not await recorder.finish(terminal, writes):
        log.error("could not commit the result of run %s: %s", run.id, recorder.failed)


def terminal_event(run: Run, result: TurnResult, held: EventBase | None) -> EventBase:
    """The runtime's own terminal event when it matches the outcome, else one made from the result."""
    expected = {"succeeded": "turn_finished", "failed": "turn_failed", "cancelled": "turn_cancelled"}
    if held is not None and held.type == expected.get(result.status):
        return held
    envelope = {"run_id": run.id, "session_id": run.session_id, "actor": "runner"}
    if result.status == "succeeded":
        return TurnFinished(**envelope)
    if result.status == "cancelled":
        return TurnCancelled(**envelope, reason="cancelled by request")
    error = result.error or {}
    return TurnFailed(
        **envelope,
        code=str(error.get("code", "internal_error")),
        message=str(error.get("message", "the turn failed")),
        action=error.get("action"),
    )
