"""The Procrastinate app of a `fleet-rlm worker`: its connector and the two tasks, bound to this worker's services.

A task receives the run's id only and hands it to the worker's `TurnService` (or `OptimizationService`), which
claims the run and executes it here. An abort (a cancel recorded by any API replica) reaches the worker over
NOTIFY and cancels the task: the turn is then stopped through its cancel token and records its own
`turn_cancelled`; a worker shutting down past its grace records its turns `interrupted` instead.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from procrastinate import App, JobContext, PsycopgConnector
from procrastinate.job_context import AbortReason

from fleet_rlm.services.queue.names import OPTIMIZATION_TASK, OPTIMIZATIONS_QUEUE, TURN_TASK, TURNS_QUEUE
from fleet_rlm.services.turns.run_deps import SHUTDOWN_REASON
from fleet_rlm.services.turns.service import TurnService

if TYPE_CHECKING:
    from fleet_rlm.services.optimization_runs import OptimizationService

log = logging.getLogger(__name__)


def libpq_url(url: str) -> str:
    """Our SQLAlchemy URL (postgresql+asyncpg://...) as psycopg's conninfo."""
    scheme, _, rest = url.partition("://")
    return f"{scheme.split('+', 1)[0]}://{rest}"


def make_app(database_url: str, turns: TurnService, optimization: OptimizationService) -> App:
    app = App(connector=PsycopgConnector(conninfo=libpq_url(database_url), min_size=1, max_size=4))

    @app.task(name=TURN_TASK, queue=TURNS_QUEUE, pass_context=True)
    async def run_turn(context: JobContext, run_id: str) -> None:
        claimed = await turns.claim_queued(run_id)
        if claimed is None:
            return  # cancelled before a worker took it, or already run
        task, token = claimed
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:  # aborted through the queue, or this worker stops past its grace
            if context.abort_reason() is AbortReason.SHUTDOWN:
                turns.interrupting.add(run_id)
                token.cancel(SHUTDOWN_REASON)
            else:
                token.cancel("cancelled by request")
            await task  # the turn records how it ended
            raise

    @app.task(name=OPTIMIZATION_TASK, queue=OPTIMIZATIONS_QUEUE, pass_context=True)
    async def run_optimization(context: JobContext, run_id: str) -> None:
        task = await optimization.claim_queued(run_id)
        if task is None:
            return
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            optimization.stop(run_id)
            await task
            raise

    return app
