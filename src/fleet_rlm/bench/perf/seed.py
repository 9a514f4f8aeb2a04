"""Bulk-seed sessions, turns, runs and events straight into the store's tables with SQLAlchemy core.

One `executemany` per chunk, not one request per row, so 1,000,000 events load in a minute or two. Rows belong
to an existing user and workspace (taken from a session the API created), so the API lists them as that user's.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from fleet_rlm.store.engine import create_engine
from fleet_rlm.store.models.chat import ChatSession, Turn
from fleet_rlm.store.models.runs import Run, RunEvent

CHUNK = 5_000
KINDS = ("code", "output", "sub_lm_start", "sub_lm_end", "reasoning")


@dataclass
class Seeded:
    session_ids: list[str]
    run_ids: list[str]
    events: int


def _chunks(rows: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


async def seed(url: str, *, like_session: str, sessions: int, turns_per_session: int, events_per_run: int) -> Seeded:
    engine = create_engine(url)
    t_sessions, t_turns = ChatSession.__table__, Turn.__table__  # type: ignore[attr-defined]
    t_runs, t_events = Run.__table__, RunEvent.__table__  # type: ignore[attr-defined]
    try:
        async with engine.begin() as conn:
            owner = (
                await conn.execute(
                    sa.select(t_sessions.c.user_id, t_sessions.c.workspace_id).where(t_sessions.c.id == like_session)
                )
            ).one()
        base = datetime.now(UTC) - timedelta(days=30)
        session_ids = [uuid.uuid4().hex for _ in range(sessions)]
        plan = [(sid, i, uuid.uuid4().hex, uuid.uuid4().hex) for sid in session_ids for i in range(turns_per_session)]

        def session_rows() -> Iterator[dict[str, Any]]:
            for n, sid in enumerate(session_ids):
                at = base + timedelta(seconds=n)
                yield {
                    "id": sid,
                    "user_id": owner.user_id,
                    "workspace_id": owner.workspace_id,
                    "title": f"seeded {n}",
                    "settings": {},
                    "created_at": at,
                    "updated_at": at,
                }

        def turn_rows() -> Iterator[dict[str, Any]]:
            for sid, i, turn_id, run_id in plan:
                yield {
                    "id": turn_id,
                    "session_id": sid,
                    "index": i,
                    "user_message": f"question {i}",
                    "answer": f"answer {i}",
                    "run_id": run_id,
                    "created_at": base,
                    "updated_at": base,
                }

        def run_rows() -> Iterator[dict[str, Any]]:
            for sid, _, turn_id, run_id in plan:
                yield {
                    "id": run_id,
                    "session_id": sid,
                    "user_id": owner.user_id,
                    "turn_id": turn_id,
                    "status": "succeeded",
                    "execution_mode": "rlm",
                    "budgets": {},
                    "usage": {},
                    "last_seq": events_per_run,
                    "created_at": base,
                    "updated_at": base,
                }

        def event_rows() -> Iterator[dict[str, Any]]:
            for _, _, _, run_id in plan:
                for seq in range(1, events_per_run + 1):
                    yield {
                        "run_id": run_id,
                        "seq": seq,
                        "type": KINDS[seq % len(KINDS)],
                        "ts": base,
                        "depth": 0,
                        "actor": "root",
                        "payload": {"text": f"event {seq} of a seeded run", "iteration": seq},
                    }

        for table, rows in (
            (t_sessions, session_rows()),
            (t_turns, turn_rows()),
            (t_runs, run_rows()),
            (t_events, event_rows()),
        ):
            for chunk in _chunks(rows):
                async with engine.begin() as conn:
                    await conn.execute(table.insert(), chunk)
    finally:
        await engine.dispose()
    return Seeded(session_ids, [run_id for *_, run_id in plan], len(plan) * events_per_run)
