"""Follow a job's state live: read it once, then again on every notice the job publishes on the bus.

No polling loop: a follower reads the row when the job reports progress or finishes (a local notice, or a
NOTIFY poke from the replica running it). `safety_s` is a slow re-read for a notice lost between replicas.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from fleet_rlm.services.live.bus import LocalBus

T = TypeVar("T")
SAFETY_S = 10.0


async def follow_job(
    bus: LocalBus,
    channel: str,
    load: Callable[[], Awaitable[T]],
    *,
    is_final: Callable[[T], bool],
    safety_s: float = SAFETY_S,
) -> AsyncIterator[T]:
    """Yield the job's state now and after every notice, ending with the first final state."""
    subscription = bus.subscribe(run_id=channel)  # before the first read: no notice is missed
    try:
        while True:
            subscription.wakeup.clear()
            while not subscription.queue.empty():
                subscription.queue.get_nowait()
            state = await load()
            yield state
            if is_final(state):
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(subscription.wakeup.wait(), safety_s)
    finally:
        bus.unsubscribe(subscription)
