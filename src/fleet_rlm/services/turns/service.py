"""Start, cancel and follow turns. One instance per app (and per queue worker); it owns the threads turns run on.

Starting a turn writes its run (inline: already running, claimed by this server; queue: `queued`, with its job,
for a `fleet-rlm worker` to claim, `queued.py`) and the user's turn in one transaction, then executes it in the
background (`executor.execute_run`): the request that started it only
follows the run's events, so a client that drops its connection does not stop the run, and any client may
resume following it.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from sqlalchemy.exc import IntegrityError

from fleet_rlm.config import Settings
from fleet_rlm.errors import Conflict, NotFound, Unavailable
from fleet_rlm.runtime.context.targets import check_turn_targets
from fleet_rlm.runtime.contracts import CancelToken, Runtime
from fleet_rlm.services.jobs.heartbeat import Heartbeats
from fleet_rlm.services.jobs.owner import process_owner
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.services.preferences import user_turn_settings
from fleet_rlm.services.turns import queued
from fleet_rlm.services.turns.event_writer import EventWriter
from fleet_rlm.services.turns.executor import execute_queued_run, execute_run
from fleet_rlm.services.turns.inputs import TurnInput
from fleet_rlm.services.turns.recovery import TurnJobs, cancel_unstarted_run
from fleet_rlm.services.turns.resume import resume_run
from fleet_rlm.services.turns.run_deps import SHUTDOWN_REASON, Caller, RunDeps
from fleet_rlm.services.turns.sources import TurnReads, read_turn_inputs
from fleet_rlm.services.turns.titles import title_from_task
from fleet_rlm.skills import require_skills
from fleet_rlm.store import Database, IdempotencyConflictError
from fleet_rlm.store.base import new_id
from fleet_rlm.store.models import ChatSession, Run
from fleet_rlm.store.repos import runs as runs_repo
from fleet_rlm.store.repos import sessions as sessions_repo
from fleet_rlm.store.repos import snapshots as snapshots_repo
from fleet_rlm.store.repos import turns as turns_repo

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from fleet_rlm.telemetry.setup import Telemetry

STOP_WAIT_S = 10.0  # how long a cancelled turn gets to wind down during shutdown


class _Raced(Exception):
    """A concurrent start with the same Idempotency-Key committed first; starting again returns its run."""


def _idempotency_conflict() -> Conflict:
    return Conflict(
        "this Idempotency-Key was used with a different input",
        code="idempotency_conflict",
        action="send a new Idempotency-Key for a new turn",
    )


class TurnService:
    def __init__(
        self,
        settings: Settings,
        database: Database,
        bus: LocalBus,
        runtime: Runtime,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.settings = settings
        self.database = database
        self.bus = bus
        self.runtime = runtime
        self.owner = process_owner()
        self.tokens: dict[str, CancelToken] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.threads = ThreadPoolExecutor(max_workers=64, thread_name_prefix="turn")
        self.draining = False  # set on shutdown: new turns are refused with `shutting_down`
        self.not_resumable: dict[str, str] = {}  # run id -> why recovery could not resume it (its interrupt reason)
        # runs stopped by the shutdown are recorded interrupted, not cancelled (RunDeps.interrupting)
        self.writer = EventWriter(database, bus)
        interval_s = settings.run_heartbeat_s
        heartbeats = Heartbeats(TurnJobs(database, bus), database, owner=self.owner, interval_s=interval_s)
        self.deps = RunDeps(
            settings, database, bus, runtime, self.threads, self.owner, self.writer, heartbeats, telemetry=telemetry
        )
        self.telemetry = telemetry
        self.interrupting = self.deps.interrupting
        self.queued = settings.execution == "queue"  # start defers turns to `fleet-rlm worker`s (services/queue)
        bus.on_cancel(self._on_cancel)

    async def start(self, caller: Caller, *, session_id: str, data: TurnInput, idempotency_key: str | None) -> Run:
        """Create (or, for a repeated idempotency key, find) the run for this input and execute it."""
        data.require_task()
        if self.draining:
            raise Unavailable(
                "the server is shutting down and takes no new turns",
                code="shutting_down",
                action="retry in a moment, once the server is back",
            )
        require_skills(data.skills)
        if data.urls or data.repo_url:  # a target the loaders would refuse is refused now: no run is created
            allow = None if self.settings.url_allow_private else False  # allowed: syntax only, no DNS here
            await asyncio.to_thread(check_turn_targets, data.urls, data.repo_url, allow_private=allow)
        try:
            run, created = await self._create(caller, session_id=session_id, data=data, idempotency_key=idempotency_key)
        except (_Raced, IntegrityError):  # a concurrent start won the key or the turn index: its run decides
            run, created = await self._create(caller, session_id=session_id, data=data, idempotency_key=idempotency_key)
        if created is None or self.queued:  # an earlier run of this Idempotency-Key, or one a worker will run
            return run
        chat, reads = created
        if run.execution_mode == "rlm":  # its sandbox starts while the turn's request is built (runtime.prepare)
            loop = asyncio.get_running_loop()
            loop.run_in_executor(None, self._prepare, run.session_id, caller.workspace_id)
        token = CancelToken()
        self.tokens[run.id] = token
        self.bus.unsaved.begin_run(run.id, run.last_seq)  # its events pass through this process (services/live)
        task = asyncio.get_running_loop().create_task(
            execute_run(self.deps, caller, run, data, token, chat, reads), name=f"run-{run.id}"
        )
        self.tasks[run.id] = task
        run_id = run.id
        task.add_done_callback(lambda _task: self._forget(run_id))
        return run

    async def _create(
        self, caller: Caller, *, session_id: str, data: TurnInput, idempotency_key: str | None
    ) -> tuple[Run, tuple[ChatSession, TurnReads] | None]:
        """One transaction: the session, the user's defaults, what the turn's request reads (`TurnReads`: before
        the first write, so SQLite's write gate is not held for it), the turn (its index computed in its
        INSERT), the run (already running, claimed by this server), the check that no other run of the session
        is active, and the session's `last_run_id` (one more, the key's lookup, with an Idempotency-Key).
        Returns (run, (session row, reads)), or (earlier run, None) for a repeated Idempotency-Key; raises
        _Raced when a concurrent request with the key got in first."""
        fingerprint = data.fingerprint()
        async with self.database.transaction(inline=True) as session:  # short: its statements and commit skip the loop
            chat = await sessions_repo.get_session(session, user_id=caller.user_id, session_id=session_id)
            if chat is None:
                raise NotFound(f"session {session_id} not found", action="list your sessions with GET /api/v1/sessions")
            if idempotency_key is not None:
                earlier = await runs_repo.find_idempotent_run(
                    session, user_id=caller.user_id, idempotency_key=idempotency_key
                )
                if earlier is not None:
                    if earlier.input_fingerprint != fingerprint:
                        raise _idempotency_conflict()
                    return earlier, None
            defaults = await user_turn_settings(session, self.settings, user_id=caller.user_id)
            reads = await read_turn_inputs(
                session, self.settings, user_id=caller.user_id, session_id=session_id, data=data, chat=chat
            )
            run_id = new_id()
            previous_run_id = chat.last_run_id
            turn = await turns_repo.add_turn(session, session_id=session_id, user_message=data.content, run_id=run_id)
            try:
                run, created = await runs_repo.create_run(
                    session,
                    run_id=run_id,
                    turn_id=turn.id,
                    owner=None if self.queued else self.owner,  # inline: claimed here, executed at once
                    user_id=caller.user_id,
                    session_id=session_id,
                    execution_mode=data.execution_mode or defaults.default_mode,
                    idempotency_key=idempotency_key,
                    input_fingerprint=fingerprint,
                    budgets=defaults.turn_budgets().over(data.model_dump()).model_dump(mode="json"),
                )
            except IdempotencyConflictError as exc:
                raise _idempotency_conflict() from exc
            if not created:  # the key's run was committed after our lookup: undo our turn, then return that run
                raise _Raced(run.id)
            active = await runs_repo.active_run_id(session, session_id=session_id, other_than=run.id)
            if active is not None:
                raise Conflict(
                    f"a turn is already running in this session (run {active})",
                    code="turn_already_running",
                    details={"run_id": active},
                )
            await snapshots_repo.save_request(  # what a resume or a queue worker rebuilds the turn from
                session, run_id=run.id, workspace_id=caller.workspace_id, turn_input=data.model_dump(mode="json")
            )
            if self.queued:  # its job is committed with the run: queued exactly when a worker can take it
                queued_event = await queued.defer_turn(
                    session, self.settings, run_id=run.id, session_id=session_id, previous_run_id=previous_run_id
                )
            chat.last_run_id = run.id  # `chat` is this transaction's row: one UPDATE at the flush, no re-read
            if not chat.title.strip():  # an untitled session is named after its first task
                chat.title = title_from_task(data.content)
            await session.flush()
        if self.queued:  # followers that subscribed before the commit (a session's watchers) see it wait
            await self.bus.publish(run.id, session_id, [queued_event])
        return run, (chat, reads)

    async def claim_queued(self, run_id: str) -> tuple[asyncio.Task[None], CancelToken] | None:
        """Worker side: claim a queued run for this process and execute it here (its request rebuilt from the
        database); returns its task and cancel token, or None when the run is not queued any more."""
        async with self.database.transaction() as session:
            run = await queued.claim(session, run_id=run_id, owner=self.owner)
        if run is None:
            return None
        token = CancelToken()
        if run.cancel_requested_at is not None:  # cancelled between the job's start and the claim
            token.cancel("cancelled by request")
        self.tokens[run.id] = token
        task = asyncio.get_running_loop().create_task(execute_queued_run(self.deps, run, token), name=f"run-{run_id}")
        self.tasks[run.id] = task
        task.add_done_callback(lambda _task: self._forget(run_id))
        return task, token

    def _prepare(self, session_id: str, workspace_id: str) -> None:
        try:
            self.runtime.prepare(session_id, workspace_id)
        except Exception:  # an optimisation: the turn starts its sandbox itself, and reports what fails
            log.debug("preparing the sandbox of session %s failed", session_id, exc_info=True)

    async def resume(self, run_id: str) -> bool:
        """Continue an orphaned run here (services/turns/resume.py); False when it is not resumable."""
        outcome = await resume_run(self, run_id)
        if outcome.result == "not_resumable":
            log.warning("run %s cannot be resumed: %s", run_id, outcome.reason)
            self.not_resumable[run_id] = outcome.reason
        return outcome.result in ("resumed", "retried", "taken")

    def forget(self, run_id: str) -> None:
        self._forget(run_id)

    def _forget(self, run_id: str) -> None:
        self.bus.unsaved.end_run(run_id)  # normally closed already, as its terminal event was delivered
        self.tokens.pop(run_id, None)
        self.tasks.pop(run_id, None)

    async def cancel(self, *, user_id: str, run_id: str) -> Run:
        """Record a durable cancel request and tell every replica; returns the run as it is now.

        A run that is no longer active (it finished, failed, was cancelled or interrupted, or never ran: a fork's
        record) has nothing to stop: `run_finished` (409) says so instead of accepting a request that does nothing.
        """
        async with self.database.transaction() as session:
            run = await runs_repo.get_run(session, run_id=run_id, user_id=user_id)
            if run is None:
                raise NotFound(f"run {run_id} not found")
            if not await runs_repo.request_cancel(session, run_id=run_id):
                raise Conflict(
                    f"run {run_id} already ended ({run.status}); there is nothing to stop",
                    code="run_finished",
                    action="start a new turn instead; the run's answer and events stay readable",
                )
            unstarted = self.queued and await queued.abort_turn(session, run_id=run_id)
        if unstarted:  # its job was cancelled before a worker took it: nobody else will end the run
            await cancel_unstarted_run(self.database, self.bus, run_id=run_id, session_id=run.session_id)
        await self.bus.announce_cancel(run_id)
        async with self.database.session() as session:
            refreshed = await runs_repo.get_run(session, run_id=run_id)
        assert refreshed is not None
        return refreshed

    def _on_cancel(self, run_id: str) -> None:
        token = self.tokens.get(run_id)
        if token is not None:
            token.cancel("cancelled by request")

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Let running turns finish (tests and graceful shutdown)."""
        tasks = list(self.tasks.values())
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    async def drain(self, grace_s: float) -> None:
        """Graceful stop: refuse new turns, let running ones finish for `grace_s`, then stop the rest.

        Stopped turns are recorded `interrupted` (turn_interrupted event, usage so far); one that does not stop
        within STOP_WAIT_S of its cancel is marked interrupted directly, so the server can always exit.
        """
        self.draining = True
        await self.wait_idle(timeout=grace_s)
        for run_id, token in list(self.tokens.items()):
            self.interrupting.add(run_id)
            token.cancel(SHUTDOWN_REASON)
        await self.wait_idle(timeout=STOP_WAIT_S)
        from fleet_rlm.services.turns.recovery import interrupt_run

        for run_id in list(self.tasks):
            async with self.database.session() as session:
                run = await runs_repo.get_run(session, run_id=run_id)
            if run is not None:
                reason = SHUTDOWN_REASON
                await interrupt_run(self.database, self.bus, run_id=run_id, session_id=run.session_id, reason=reason)

    async def shutdown(self) -> None:
        await self.drain(grace_s=0.0)  # the server already gave turns their grace (cli/server.py) before this
        self.threads.shutdown(wait=False, cancel_futures=True)
        await self.writer.stop()
