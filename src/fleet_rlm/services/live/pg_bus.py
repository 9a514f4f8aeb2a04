"""Cross-replica delivery on PostgreSQL with LISTEN/NOTIFY.

Notifications carry only `{run_id, session_id, seq}` (NOTIFY payloads are small); a replica that hears about
events it did not publish pokes its local subscribers, which then read the committed rows from the database.
Cancel requests travel the same way, so a cancel sent to any replica reaches the one executing the run. The
durable `runs.cancel_requested_at` column stays the source of truth; this only makes it fast.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import uuid
from typing import Any

import asyncpg

from fleet_rlm.services.live.bus import LocalBus

log = logging.getLogger(__name__)

EVENTS_CHANNEL = "fleet_events"
CANCEL_CHANNEL = "fleet_cancel"


def asyncpg_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


class PostgresBus(LocalBus):
    def __init__(self, url: str) -> None:
        super().__init__()
        self._dsn = asyncpg_dsn(url)
        self._origin = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._listener: asyncpg.Connection | None = None
        self._sender: asyncpg.Connection | None = None
        self._send_lock = asyncio.Lock()

    async def start(self) -> None:
        self._listener = await asyncpg.connect(self._dsn)
        self._sender = await asyncpg.connect(self._dsn)
        await self._listener.add_listener(EVENTS_CHANNEL, self._on_events)
        await self._listener.add_listener(CANCEL_CHANNEL, self._on_cancel)

    async def stop(self) -> None:
        for connection in (self._listener, self._sender):
            if connection is not None:
                try:
                    await connection.close(timeout=2)
                except Exception:  # closing during shutdown: nothing left to protect
                    connection.terminate()
        self._listener = self._sender = None

    async def _notify(self, channel: str, body: dict[str, Any]) -> None:
        if self._sender is None:
            return
        payload = json.dumps({**body, "origin": self._origin})
        try:
            async with self._send_lock:
                await self._sender.execute("SELECT pg_notify($1, $2)", channel, payload)
        except Exception as exc:  # delivery is best effort: followers also poll the database
            log.warning("NOTIFY %s failed: %s", channel, exc)

    async def publish(self, run_id: str, session_id: str, batch: list[dict[str, Any]]) -> None:
        self.deliver(run_id, session_id, batch)
        if batch:
            await self._notify(EVENTS_CHANNEL, {"run_id": run_id, "session_id": session_id, "seq": batch[-1]["seq"]})

    async def saved(self, runs: list[tuple[str, str, int]]) -> None:
        await super().saved(runs)
        if runs:  # one round trip for every run of the committed batch
            origin = self._origin
            payloads = [json.dumps({"run_id": r, "session_id": s, "seq": q, "origin": origin}) for r, s, q in runs]
            await self._notify_many(EVENTS_CHANNEL, payloads)

    async def _notify_many(self, channel: str, payloads: list[str]) -> None:
        if self._sender is None:
            return
        try:
            async with self._send_lock:
                await self._sender.execute("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", channel, payloads)
        except Exception as exc:  # delivery is best effort: followers also poll the database
            log.warning("NOTIFY %s failed: %s", channel, exc)

    async def announce_cancel(self, run_id: str) -> None:
        await self.dispatch_cancel(run_id)
        await self._notify(CANCEL_CHANNEL, {"run_id": run_id})

    def _decode(self, payload: str) -> dict[str, Any] | None:
        try:
            body = json.loads(payload)
        except ValueError:
            return None
        if not isinstance(body, dict) or body.get("origin") == self._origin:
            return None
        return body

    def _on_events(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        body = self._decode(payload)
        if body is None:
            return
        targets = set(self._by_run.get(str(body.get("run_id")), ())) | set(
            self._by_session.get(str(body.get("session_id")), ())
        )
        for subscription in targets:
            subscription.wakeup.set()

    def _on_cancel(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        body = self._decode(payload)
        if body and body.get("run_id"):
            asyncio.get_running_loop().create_task(self.dispatch_cancel(str(body["run_id"])))
