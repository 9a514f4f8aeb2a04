"""Turns as clients see them: each with its run's status and error, so a failed turn reads as failed, not empty."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.schemas.sessions import TurnOut
from fleet_rlm.store.models import Turn
from fleet_rlm.store.repos import turns


async def turns_out(s: AsyncSession, rows: Sequence[Turn]) -> list[TurnOut]:
    """`rows` as `TurnOut`, with the status and error of the run each points at (one query for all)."""
    states = await turns.run_states(s, run_ids=[row.run_id for row in rows if row.run_id])
    out: list[TurnOut] = []
    for row in rows:
        status, error = states.get(row.run_id or "", (None, None))
        out.append(TurnOut.model_validate(row).model_copy(update={"status": status, "error": error}))
    return out
