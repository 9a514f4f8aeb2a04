"""The session export bundle: session, turns, runs, every event and artifact metadata in one document.

Read in one transaction so the bundle is consistent. Events are paged from the store (1000 at a time) and the
bundle is bounded (MAX_RUNS runs); an export is for archiving and debugging, not for streaming. A fork's bundle
also holds the runs (events, artifacts) of the turns it inherited: they belong to the origin session.
"""

from __future__ import annotations

from fleet_rlm.schemas.artifacts import ArtifactOut
from fleet_rlm.schemas.runs import EventOut, RunOut
from fleet_rlm.schemas.sessions import SessionExport, SessionOut
from fleet_rlm.services.lookups import owned_session
from fleet_rlm.services.turn_views import turns_out
from fleet_rlm.store import Database, utcnow
from fleet_rlm.store.repos import artifacts, events, runs, turns

MAX_RUNS = 10_000
EVENT_PAGE = 1000


async def build_export(db: Database, *, user_id: str, session_id: str) -> SessionExport:
    async with db.transaction() as s:
        chat = await owned_session(s, user_id=user_id, session_id=session_id)
        turn_rows = await turns.list_turns(s, session_id=session_id)
        run_rows = await runs.list_runs(s, session_id=session_id, limit=MAX_RUNS)
        own = {run.id for run in run_rows}
        inherited = [t.run_id for t in turn_rows if t.run_id and t.run_id not in own]
        for run_id in inherited:
            run = await runs.get_run(s, run_id=run_id, user_id=user_id)
            if run is not None:  # gone when the origin was deleted
                run_rows.append(run)
        run_rows.sort(key=lambda r: r.created_at)
        event_rows = []
        for run in run_rows:
            after = 0
            while True:
                page = await events.list_events(s, run_id=run.id, after_seq=after, limit=EVENT_PAGE)
                event_rows.extend(page)
                if len(page) < EVENT_PAGE:
                    break
                after = page[-1].seq
        turn_items = await turns_out(s, turn_rows)
        artifact_rows = await artifacts.list_session_artifacts(s, user_id=user_id, session_id=session_id)
        for run_id in inherited:
            found = await artifacts.list_artifacts(s, user_id=user_id, run_id=run_id, limit=artifacts.MAX_PAGE)
            artifact_rows.extend(reversed(found.items))
    return SessionExport(
        exported_at=utcnow(),
        session=SessionOut.model_validate(chat),
        turns=turn_items,
        runs=[RunOut.model_validate(r) for r in run_rows],
        events=[EventOut.model_validate(e) for e in event_rows],
        artifacts=[ArtifactOut.model_validate(a) for a in artifact_rows],
    )
