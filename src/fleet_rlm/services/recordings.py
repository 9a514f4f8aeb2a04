"""The persistence side of the runtime's LM recordings: the run's sink hands its recorded items here, and they
are written in the same transaction as the batch of events they arrived with (runtime/recording.py says what
an item holds; the runtime itself never touches the store)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.runtime.lm_exchange import LMExchange, RecordedItem, RecordingDone, TurnInputs
from fleet_rlm.store.repos import recordings as repo
from fleet_rlm.store.repos.recordings import NewExchange


async def store_items(session: AsyncSession, *, run_id: str, items: Sequence[RecordedItem]) -> None:
    exchanges: list[NewExchange] = []
    for item in items:
        if isinstance(item, TurnInputs):
            await repo.save_inputs(session, run_id=run_id, inputs=item.inputs)
        elif isinstance(item, LMExchange):
            exchanges.append(
                NewExchange(
                    seq=item.seq,
                    role=item.role,
                    actor=item.actor,
                    depth=item.depth,
                    request_hash=item.request_hash,
                    request=item.request,
                    response=item.response,
                    error=item.error,
                    truncated=item.truncated,
                    lm_params=item.lm_params,
                )
            )
        elif isinstance(item, RecordingDone):
            if exchanges:
                await repo.add_exchanges(session, run_id=run_id, exchanges=exchanges)
                exchanges = []
            await repo.finish_recording(
                session,
                run_id=run_id,
                calls=item.calls,
                size=item.bytes,
                truncated=item.truncated,
                status=item.status,
                answer=item.answer,
                programs=item.programs,
            )
    if exchanges:
        await repo.add_exchanges(session, run_id=run_id, exchanges=exchanges)
