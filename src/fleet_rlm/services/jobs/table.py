"""`TableJobs`: what every job kind backed by one table holds — its database, the bus, the ids running here."""

from __future__ import annotations

from collections.abc import Container

from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.store import Database


class TableJobs:
    def __init__(self, database: Database, bus: LocalBus, active: Container[str] = ()) -> None:
        self.database = database
        self.bus = bus
        self._active = active

    @property
    def active(self) -> Container[str]:
        """Ids of this kind's jobs running in this process (the sweeper never touches them)."""
        return self._active
