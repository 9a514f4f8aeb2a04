"""Turns on the job queue (`execution = "queue"`, Postgres): the API side defers, the worker side claims.

`start` creates the run `queued` and defers its job in the same transaction (`defer_turn`, which also writes the
run's first event, `turn_queued`, so every client shows the turn waiting): the job carries the
run id only, its queueing lock keeps one waiting job per run, and a session whose previous turn ran on a worker
that still beats goes to that worker's own queue (it holds the session's REPL), else to the shared one. A worker
claims the run (`claim_queued`: running, owned by it, a new claim epoch that fences every later write) and
executes it like an inline turn, its request rebuilt from the database. A cancel aborts the job in the
transaction that records it (`abort_turn`): a job no worker took yet is cancelled and its run ended here.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.config import Settings
from fleet_rlm.events import TurnQueued, event_to_json, with_seq
from fleet_rlm.services.live.codec import to_new_event
from fleet_rlm.services.queue import jobs
from fleet_rlm.services.queue.names import TURN_TASK, TURNS_QUEUE, worker_queue
from fleet_rlm.store import InvalidTransitionError
from fleet_rlm.store.models import Run
from fleet_rlm.store.repos import runs as runs_repo
from fleet_rlm.store.repos.events import append_events

log = logging.getLogger(__name__)

KIND = "turn"


async def defer_turn(
    session: AsyncSession, settings: Settings, *, run_id: str, session_id: str, previous_run_id: str | None
) -> dict[str, Any]:
    """Enqueue the run's job in the caller's transaction, with the run's first event (`turn_queued`, seq 1);
    returns that event's JSON for the bus, to publish once committed."""
    queue = TURNS_QUEUE
    if previous_run_id is not None:
        previous = await runs_repo.get_run(session, run_id=previous_run_id)
        worker = previous.owner if previous is not None else None
        if worker and await jobs.worker_alive(session, name=worker, stale_s=settings.run_stale_after_s):
            queue = worker_queue(worker)
    await jobs.defer(session, task=TURN_TASK, queue=queue, kind=KIND, run_id=run_id)
    event = TurnQueued(run_id=run_id, session_id=session_id, actor="runner", queue=queue)
    (row,) = await append_events(session, run_id=run_id, events=[to_new_event(event)])
    return event_to_json(with_seq(event, row.seq))


async def abort_turn(session: AsyncSession, *, run_id: str) -> bool:
    """Abort the run's job with the cancel request; True when the job had not started (the caller ends the run)."""
    return await jobs.abort(session, kind=KIND, run_id=run_id) == "todo"


async def claim(session: AsyncSession, *, run_id: str, owner: str) -> Run | None:
    """The queued run, now running here under a new claim epoch; None when it is not queued any more."""
    try:
        return await runs_repo.claim_run(session, run_id=run_id, owner=owner)
    except InvalidTransitionError as exc:
        log.info("run %s not claimed: %s", run_id, exc)
        return None
