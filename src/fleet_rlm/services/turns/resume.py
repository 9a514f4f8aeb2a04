"""Resume a run whose owner died: continue it from its last completed iteration instead of losing it.

`resume_run` is the entry point any process that finds an orphaned run calls (startup recovery and the liveness
sweep here; a queue worker elsewhere). It takes the run over (fenced on its dead owner), rebuilds its turn from
what started it (`run_requests`: the client's input; the caller's LM profiles and keys are read again), and runs
it with a `ResumePoint`: the root's first K iterations answer with their recorded cell results (no cell runs
again), every LM request the run already made is answered from its own recording (no call and no cost is
repeated: runtime/resume_lm.py), the REPL is restored from the snapshot after iteration K, and the run goes on
live, appending to its own event log.

A run is not resumable when nothing started it that can be read again (no `run_requests` row), or when it made
LM calls but its root completed no iteration with a snapshot: then, if it made no LM call at all, it is simply
run again from the start; otherwise it is recorded interrupted as before, with the reason. Variables the
snapshot could not keep are named in the run's `repl_restored` event; the model sees a NameError if it needs one.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from fleet_rlm.runtime.contracts import CancelToken
from fleet_rlm.runtime.repl_snapshots import ReplRestore, ResumePoint
from fleet_rlm.services.recordings import as_exchanges
from fleet_rlm.services.turns.executor import execute_run
from fleet_rlm.services.turns.inputs import TurnInput
from fleet_rlm.services.turns.run_deps import Caller, RunDeps
from fleet_rlm.services.turns.sources import build_turn_request, read_turn_inputs
from fleet_rlm.store.repos import recordings as recordings_repo
from fleet_rlm.store.repos import runs as runs_repo
from fleet_rlm.store.repos import sessions as sessions_repo
from fleet_rlm.store.repos import snapshots as snapshots_repo
from fleet_rlm.store.repos import workspaces as workspaces_repo


class ResumeHost(Protocol):
    """What resuming needs of the service that will run the turn (`TurnService`, or a queue worker's)."""

    deps: RunDeps
    owner: str
    tokens: dict[str, CancelToken]
    tasks: dict[str, asyncio.Task[None]]

    def forget(self, run_id: str) -> None: ...


log = logging.getLogger(__name__)

MAX_RESUMES = 3
"""A run that keeps killing its server is resumed at most this many times, then recorded interrupted."""

Resumed = Literal["resumed", "retried", "not_resumable", "taken"]


@dataclass(frozen=True)
class ResumeOutcome:
    result: Resumed
    reason: str = ""
    iteration: int = 0  # the root iteration it continues after


async def resume_run(service: ResumeHost, run_id: str) -> ResumeOutcome:
    """Continue an orphaned running run in this process (see the module docstring)."""
    db = service.deps.database
    async with db.transaction() as s:
        run = await runs_repo.get_run(s, run_id=run_id)
        request = await snapshots_repo.get_request(s, run_id=run_id)
        if run is None or run.status != "running":
            return ResumeOutcome("taken", "the run is not running")
        if request is None:
            return ResumeOutcome("not_resumable", "the run's request was not kept")
        if request.resumes >= MAX_RESUMES:
            return ResumeOutcome("not_resumable", f"the run was resumed {MAX_RESUMES} times already")
        stored = await recordings_repo.list_exchanges(s, run_id=run_id)
        snapshots = await snapshots_repo.list_snapshots(s, run_id=run_id)
        point = await _resume_point(s, run_id, stored, snapshots)
        if point is None and stored:
            return ResumeOutcome("not_resumable", "its REPL has no snapshot of a completed iteration to resume from")
        claimed = await runs_repo.take_over_run(s, run_id=run_id, owner=service.owner, previous_owner=run.owner)
        if claimed is None:
            return ResumeOutcome("taken", "another server took the run over")
        request.resumes += 1
        chat = await sessions_repo.get_session(s, user_id=run.user_id, session_id=run.session_id)
        workspace = await workspaces_repo.get_workspace(s, user_id=run.user_id, workspace_id=request.workspace_id)
        data = TurnInput.model_validate(request.turn_input)
        reads = await read_turn_inputs(
            s, service.deps.settings, user_id=run.user_id, session_id=run.session_id, data=data
        )
    if chat is None or workspace is None:
        return ResumeOutcome("not_resumable", "the run's session or workspace is gone")
    caller = Caller(user_id=run.user_id, workspace_id=workspace.id, workspace_dir=Path(workspace.root_path))
    turn = build_turn_request(service.deps, caller, claimed, data, chat, reads)
    if point is not None:
        turn = replace(turn, resume=point)
    token = CancelToken()
    service.tokens[run_id] = token
    service.deps.bus.unsaved.begin_run(run_id, claimed.last_seq)
    task = asyncio.get_running_loop().create_task(
        execute_run(service.deps, caller, claimed, data, token, chat, reads, request=turn), name=f"run-{run_id}"
    )
    service.tasks[run_id] = task
    task.add_done_callback(lambda _task: service.forget(run_id))
    if point is None:
        log.warning("run %s restarted: its server stopped before it made an LM call", run_id)
        return ResumeOutcome("retried")
    log.warning("run %s resumed after iteration %d", run_id, point.restore.iteration)
    return ResumeOutcome("resumed", iteration=point.restore.iteration)


async def _resume_point(s: Any, run_id: str, stored: list[Any], snapshots: list[Any]) -> ResumePoint | None:
    """The root's recorded cells up to its last snapshot, that snapshot's values and the recorded exchanges."""
    by_iteration = {snap.iteration: snap for snap in snapshots}  # a resumed run's later snapshot of one wins
    last = max(by_iteration, default=0)
    if last == 0 or any(i not in by_iteration for i in range(1, last + 1)):
        return None
    if by_iteration[last].cell.get("kind") is None:
        return None
    snapshot = by_iteration[last]
    texts = await snapshots_repo.blob_texts(s, hashes=set(snapshot.variables.values()))
    values = {name: texts[h] for name, h in snapshot.variables.items() if h in texts}
    missing = {name: "its value was not stored" for name, h in snapshot.variables.items() if h not in texts}
    exchanges = tuple(as_exchanges(stored))
    restore = ReplRestore(values, {**dict(snapshot.skipped), **missing}, "resume", run_id, last)
    cells = tuple(dict(by_iteration[i].cell) for i in range(1, last + 1))
    return ResumePoint(cells, restore, exchanges, first_seq=max((e.seq for e in stored), default=0) + 1)
