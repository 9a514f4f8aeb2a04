"""What executing a run needs, as small typed values: who started it and the parts of the server it uses.

The executor and the request builder take these instead of the whole `TurnService`, so they never import it.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fleet_rlm.config import Settings
from fleet_rlm.runtime.contracts import Runtime
from fleet_rlm.services.jobs.heartbeat import Heartbeats
from fleet_rlm.services.live.bus import LocalBus
from fleet_rlm.services.turns.event_writer import EventWriter
from fleet_rlm.store import Database

if TYPE_CHECKING:
    from fleet_rlm.telemetry.setup import Telemetry

SHUTDOWN_REASON = "the server stopped before the turn finished"


@dataclass(frozen=True)
class Caller:
    """Who starts a turn and where their workspace lives."""

    user_id: str
    workspace_id: str
    workspace_dir: Path


@dataclass
class RunDeps:
    """The server parts a running turn uses. `interrupting` holds runs a server shutdown is stopping."""

    settings: Settings
    database: Database
    bus: LocalBus
    runtime: Runtime
    threads: Executor
    owner: str
    writer: EventWriter  # stores every running run's events, shared transactions
    heartbeats: Heartbeats  # beats every running run of this server in one transaction
    interrupting: set[str] = field(default_factory=set)
    telemetry: Telemetry | None = None  # exports each run as an OpenTelemetry trace (None: tracing off)
