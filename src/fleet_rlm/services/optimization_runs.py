"""Optimization runs in the background: start, live progress, durable cancel, saved versions, promotion.

One instance per app. A run is a job (`services/jobs`, kind `optimization_jobs.OptimizationJobs`): claimed with
this process as owner, beating, its progress written to the row and published on the live bus as it changes
(followers are woken, not polling), a durable cancel request on the row turned into the GEPA stop flag (a
cancel sent to any replica reaches the one running it), and swept to interrupted with the turns when its server
died. GEPA itself (`fleet_rlm.optimize`) runs on a worker thread and knows nothing of this. With queue execution
the run is deferred to the `optimizations` queue in the transaction that creates it and a `fleet-rlm worker`
runs it (`claim_queued`), with its own concurrency.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fleet_rlm.config import Settings
from fleet_rlm.errors import Conflict, FleetError, NotFound
from fleet_rlm.events.status import FINAL
from fleet_rlm.optimize.datasets import split_rows
from fleet_rlm.optimize.gepa_run import GEPAConfig, GEPAOutcome, run_gepa
from fleet_rlm.optimize.modules import BuildContext, LMProvider, OptimizableModule, get_module
from fleet_rlm.optimize.programs_db import DatabasePrograms
from fleet_rlm.optimize.progress import OptimizationProgress, ProgressTracker
from fleet_rlm.optimize.promotion import PromotionCheck, check_promotion, not_better
from fleet_rlm.optimize.versions import manifest, program_json, results_json
from fleet_rlm.runtime.programs import BUILTIN_VERSION
from fleet_rlm.services.jobs.follow import follow_job
from fleet_rlm.services.jobs.heartbeat import Heartbeats
from fleet_rlm.services.jobs.job import FINISHED_EVENT, Job, channel
from fleet_rlm.services.jobs.owner import process_owner
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.services.optimization_jobs import KIND, OptimizationJobs
from fleet_rlm.services.queue import jobs as queue_jobs
from fleet_rlm.services.queue.names import OPTIMIZATION_TASK, OPTIMIZATIONS_QUEUE
from fleet_rlm.store import Database
from fleet_rlm.store.models import OptimizationRun, ProgramVersion
from fleet_rlm.store.repos import datasets as datasets_repo
from fleet_rlm.store.repos import optimization as repo
from fleet_rlm.store.repos import programs as programs_repo

log = logging.getLogger(__name__)
LMProviderFactory = Callable[[str], Awaitable[LMProvider]]


def _instructions(version: ProgramVersion | None) -> dict[str, Any]:
    """The instructions a run starts from: those of the version in effect when it was started, else none."""
    return dict((version.program or {}).get("instructions") or {}) if version is not None else {}


def run_not_found(run_id: str) -> NotFound:
    return NotFound(
        f"optimization run {run_id} not found",
        code="optimization_run_not_found",
        action="list your runs with GET /api/v1/optimization/runs or `fleet-rlm optimize runs`",
    )


class OptimizationService:
    def __init__(
        self,
        settings: Settings,
        database: Database,
        bus: LocalBus,
        *,
        lm_provider_for: LMProviderFactory,
        programs: DatabasePrograms | None = None,
        owner: str | None = None,
    ) -> None:
        self.settings = settings
        self.database = database
        self.bus = bus
        self.lm_provider_for = lm_provider_for
        self.programs = programs
        self.owner = owner or process_owner()
        self.queued = settings.execution == "queue"  # start defers runs to `fleet-rlm worker`s (services/queue)
        self.threads = ThreadPoolExecutor(max_workers=4, thread_name_prefix="optimize")
        self.cancels: dict[str, threading.Event] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.jobs = OptimizationJobs(database, bus, active=self.tasks)  # the sweeper's view of these runs
        self.heartbeats = Heartbeats(self.jobs, database, owner=self.owner, interval_s=settings.run_heartbeat_s)
        bus.on_cancel(self._on_cancel)

    async def start(
        self, *, user_id: str, module: str, dataset_id: str, config: GEPAConfig, val_fraction: float = 0.3
    ) -> OptimizationRun:
        spec = get_module(module)
        budget = config.budget()
        async with self.database.transaction() as s:  # queue execution: its job is deferred with the run
            dataset = await datasets_repo.get_dataset(s, dataset_id=dataset_id, user_id=user_id)
            if dataset is None:
                raise NotFound(
                    f"dataset {dataset_id} not found",
                    code="dataset_not_found",
                )
            if dataset.module != spec.name:
                raise Conflict(
                    f"dataset {dataset.name!r} is for module {dataset.module!r}, not {spec.name!r}",
                    code="dataset_module_mismatch",
                )
            current = (await programs_repo.in_effect(s, user_id=user_id)).get(spec.name)
            rows = list(dataset.rows or [])
            train, val = split_rows(rows, val_fraction=val_fraction, seed=config.seed)
            run_config = {
                "budget": budget,
                "seed": config.seed,
                "threads": config.threads,
                "reflection_minibatch_size": config.reflection_minibatch_size,
                "val_fraction": val_fraction,
                "train_size": len(train),
                "val_size": len(val),
                "dataset_name": dataset.name,
                "use_merge": config.use_merge,
                "baseline_version": current.version if current is not None else BUILTIN_VERSION,
            }
            run = await repo.create_run(s, user_id=user_id, module=spec.name, dataset_id=dataset.id, config=run_config)
            if self.queued:
                await queue_jobs.defer(s, task=OPTIMIZATION_TASK, queue=OPTIMIZATIONS_QUEUE, kind=KIND, run_id=run.id)
        if self.queued:
            return run
        info = {"id": dataset.id, "name": dataset.name, "rows": len(rows), "train": len(train), "val": len(val)}
        await self._launch(run, spec, train, val, config, info, _instructions(current))
        return run

    async def _launch(
        self,
        run: OptimizationRun,
        spec: OptimizableModule,
        train: list[dict[str, Any]],
        val: list[dict[str, Any]],
        config: GEPAConfig,
        info: dict[str, Any],
        seed: dict[str, Any],
    ) -> asyncio.Task[None]:
        """Run it here; `seed` is the instructions of the version it starts from (the promoted one, else none)."""
        provider = await self.lm_provider_for(run.user_id)
        cancel = threading.Event()
        self.cancels[run.id] = cancel
        ctx = BuildContext(settings=self.settings, lms=provider, instructions=seed)
        coro = self._execute(run.id, spec, ctx, train, val, config, cancel, info, dict(run.config))
        task = asyncio.get_running_loop().create_task(coro, name=f"optimize-{run.id}")
        self.tasks[run.id] = task
        run_id = run.id
        task.add_done_callback(lambda _t: self._forget(run_id))
        return task

    async def claim_queued(self, run_id: str) -> asyncio.Task[None] | None:
        """Queue worker side: run a queued optimization here, rebuilt from its row (its dataset split again with
        the stored seed and fraction); None when it is not queued any more. The claim is `Job.running`'s."""
        async with self.database.session() as s:
            run = await repo.get_run(s, run_id=run_id)
            if run is None or run.status != "queued" or run.dataset_id is None:
                return None
            dataset = await datasets_repo.get_dataset(s, dataset_id=run.dataset_id, user_id=run.user_id)
            stored = dict(run.config)
            baseline = str(stored.get("baseline_version") or BUILTIN_VERSION)  # the version it was started from
            current = (
                None
                if baseline == BUILTIN_VERSION
                else await programs_repo.get_version(s, module=run.module, version=baseline)
            )
        if dataset is None:
            return None
        rows = list(dataset.rows or [])
        train, val = split_rows(rows, val_fraction=stored["val_fraction"], seed=stored["seed"])
        config = GEPAConfig(
            **stored["budget"],
            seed=stored["seed"],
            reflection_minibatch_size=stored["reflection_minibatch_size"],
            threads=stored["threads"],
            use_merge=stored.get("use_merge", False),
        )
        info = {"id": dataset.id, "name": dataset.name, "rows": len(rows), "train": len(train), "val": len(val)}
        return await self._launch(run, get_module(run.module), train, val, config, info, _instructions(current))

    def stop(self, run_id: str) -> None:
        """Stop a run executing here (its job was aborted): GEPA's stop flag, as a cancel."""
        self._on_cancel(run_id)

    def _forget(self, run_id: str) -> None:
        self.tasks.pop(run_id, None)
        self.cancels.pop(run_id, None)

    async def _execute(
        self,
        run_id: str,
        module: OptimizableModule,
        ctx: BuildContext,
        train: list[dict[str, Any]],
        val: list[dict[str, Any]],
        config: GEPAConfig,
        cancel: threading.Event,
        dataset: dict[str, Any],
        run_config: dict[str, Any],
    ) -> None:
        job = Job(
            self.jobs,
            self.database,
            self.bus,
            job_id=run_id,
            owner=self.owner,
            heartbeats=self.heartbeats,
            on_cancel=cancel.set,
        )
        latest: dict[str, OptimizationProgress] = {}

        def report(progress: OptimizationProgress) -> None:  # on GEPA's threads
            latest["p"] = progress
            job.report(progress.to_dict())

        tracker = ProgressTracker(report)
        outcome: GEPAOutcome | None = None
        error: dict[str, Any] | None = None
        try:
            async with job.running():
                outcome = await asyncio.get_running_loop().run_in_executor(
                    self.threads,
                    lambda: run_gepa(module, ctx, train=train, val=val, config=config, tracker=tracker, cancel=cancel),
                )
        except FleetError as exc:
            error = exc.to_dict()
        except Exception as exc:
            log.exception("optimization run %s failed", run_id)
            error = {"code": "optimization_failed", "message": f"{type(exc).__name__}: {exc}"}
        try:
            await self._finish(run_id, module, outcome, error, latest.get("p"), dataset, run_config)
        finally:
            await job.announce()

    async def _finish(
        self,
        run_id: str,
        module: OptimizableModule,
        outcome: GEPAOutcome | None,
        error: dict[str, Any] | None,
        progress: OptimizationProgress | None,
        dataset: dict[str, Any],
        run_config: dict[str, Any],
    ) -> None:
        final = (progress or OptimizationProgress()).to_dict() | {"phase": "done", "finished": True}
        if outcome is not None:
            final["metric_calls"] = outcome.metric_calls
        async with self.database.transaction() as s:
            await repo.set_progress(s, run_id=run_id, progress=final)
            if outcome is None:
                await repo.set_status(s, run_id=run_id, status="failed", error=error or {"code": "optimization_failed"})
                return
            scores = {
                "baseline": outcome.baseline_score,
                "optimized": outcome.optimized_score,
                "metric_calls": outcome.metric_calls,
                "iterations": outcome.iterations,
                "baseline_version": run_config["baseline_version"],
            }
            results = results_json(outcome)
            if outcome.status == "cancelled":
                await repo.set_status(s, run_id=run_id, status="cancelled", scores=scores, results=results)
                return
            run = await repo.get_run(s, run_id=run_id)
            label = await programs_repo.next_version_label(s, module=module.name)
            await programs_repo.add_version(
                s,
                user_id=run.user_id if run is not None else None,
                module=module.name,
                version=label,
                program=program_json(module, outcome),
                manifest=manifest(module, outcome, run_id=run_id, dataset=dataset, config=run_config),
            )
            await repo.set_status(
                s, run_id=run_id, status="succeeded", scores=scores, results=results, program_version=label
            )

    async def get(self, *, user_id: str, run_id: str) -> OptimizationRun:
        async with self.database.session() as s:
            row = await repo.get_run(s, run_id=run_id, user_id=user_id)
        if row is None:
            raise run_not_found(run_id)
        return row

    async def stream(self, *, user_id: str, run_id: str) -> AsyncIterator[OptimizationRun]:
        """The run now, then after every progress notice, ending with its final state (no polling)."""
        await self.get(user_id=user_id, run_id=run_id)
        async for row in follow_job(
            self.bus,
            channel(KIND, run_id),
            lambda: self.get(user_id=user_id, run_id=run_id),
            is_final=lambda r: r.status in FINAL,
        ):
            yield row

    async def cancel(self, *, user_id: str, run_id: str) -> OptimizationRun:
        """Durable cancel: stamped on the row (any replica's heartbeat sees it) and announced on the bus, so the
        replica running it stops at once."""
        async with self.database.transaction() as s:
            row = await repo.get_run(s, run_id=run_id, user_id=user_id)
            if row is None:
                raise run_not_found(run_id)
            await repo.request_cancel(s, run_id=run_id)
            unstarted = self.queued and await queue_jobs.abort(s, kind=KIND, run_id=run_id) == "todo"
            if unstarted:  # no worker took its job: it ends here
                await repo.set_status(s, run_id=run_id, status="cancelled")
        if unstarted:
            notice = {"type": FINISHED_EVENT, "seq": 1, "job_id": run_id, "kind": KIND}
            await self.bus.publish(channel(KIND, run_id), "", [notice])
        await self.bus.announce_cancel(run_id)
        return await self.get(user_id=user_id, run_id=run_id)

    def _on_cancel(self, run_id: str) -> None:
        local = self.cancels.get(run_id)
        if local is not None:
            local.set()

    async def promotion(self, *, user_id: str, run_id: str, globally: bool = False) -> PromotionCheck:
        """The run's version beside the one the scope runs now, on the run's validation rows."""
        run = await self.get(user_id=user_id, run_id=run_id)
        if run.program_version is None:
            raise Conflict(
                f"optimization run {run_id} has no saved version (status {run.status})",
                code="optimization_run_without_version",
                action="promote a run that succeeded",
            )
        async with self.database.session() as s:
            if globally:
                promotion = (await programs_repo.current_promotions(s, user_id=None)).get((run.module, None))
                ids = [promotion.version_id] if promotion is not None else []
                current = next(iter((await programs_repo.versions_by_id(s, ids)).values()), None)
            else:
                current = (await programs_repo.in_effect(s, user_id=user_id)).get(run.module)
        return check_promotion(
            module=run.module,
            candidate_version=run.program_version,
            scores=run.scores or {},
            config=run.config or {},
            current_version=current.version if current is not None else None,
        )

    async def promote(
        self, *, user_id: str, run_id: str, globally: bool = False, confirm: bool = False
    ) -> ProgramVersion:
        """Promote the run's version for the caller's own turns, or (`globally`, admins) for every user's. A
        version not strictly better than the one it replaces, on the same validation rows, needs `confirm`."""
        check = await self.promotion(user_id=user_id, run_id=run_id, globally=globally)
        if not (check.better or check.already_current or confirm):
            raise not_better(check)
        run = await self.get(user_id=user_id, run_id=run_id)
        assert run.program_version is not None
        async with self.database.transaction() as s:
            await programs_repo.promote(
                s,
                module=run.module,
                version=run.program_version,
                scope=None if globally else user_id,
                promoted_by=user_id,
            )
            row = await programs_repo.get_version(s, module=run.module, version=run.program_version)
        await self._refresh()
        assert row is not None
        return row

    async def rollback(self, *, user_id: str, module: str, globally: bool = False) -> ProgramVersion | None:
        """Withdraw the module's current promotion in the caller's own scope (or the global one); returns the
        version the caller's turns now run (None: the built-in)."""
        get_module(module)
        async with self.database.transaction() as s:
            await programs_repo.rollback(s, module=module, scope=None if globally else user_id)
            row = (await programs_repo.in_effect(s, user_id=user_id)).get(module)
        await self._refresh()
        return row

    async def _refresh(self) -> None:
        if self.programs is not None:
            await self.programs.refresh()

    async def wait_idle(self, timeout: float = 60.0) -> None:
        tasks = list(self.tasks.values())
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    async def shutdown(self) -> None:
        for event in list(self.cancels.values()):
            event.set()
        await self.wait_idle(timeout=20.0)
        self.threads.shutdown(wait=False, cancel_futures=True)
