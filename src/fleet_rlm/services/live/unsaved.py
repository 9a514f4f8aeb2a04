"""Events delivered live before their transaction committed: the tail a follower reads after the database.

A run's recorder hands each event to this process's subscribers as soon as it is emitted and has it written in
the background (services/turns/event_writer.py). Until that write commits, the event exists only here; a
follower filling a gap takes a snapshot of this tail *before* it reads the database, so every event is in one
of the two: committed before the read (the database has it) or still unsaved at the snapshot (the tail has it).

A run recorded here is tracked from its start until its terminal event is delivered: this process then knows
up to which seq the database holds its events, so a follower already past that point needs no database read at
all (`known_after`) — the common case of a client following the run it just started.
"""

from __future__ import annotations

from typing import Any


class UnsavedEvents:
    """Per run: event JSON (each with `seq`, ascending) not yet known to be committed."""

    def __init__(self) -> None:
        self._by_run: dict[str, list[dict[str, Any]]] = {}
        self._recording: dict[str, int] = {}  # run recorded here -> the seq up to which its events are committed

    def begin_run(self, run_id: str, committed: int) -> None:
        """`run_id` is recorded by this process from now on; its events up to `committed` are in the database."""
        self._recording[run_id] = committed

    def end_run(self, run_id: str) -> None:
        """The run's terminal event is about to be delivered (or its recording stopped): followers use the database."""
        self._recording.pop(run_id, None)

    def is_recording(self, run_id: str) -> bool:
        return run_id in self._recording

    def known_after(self, run_id: str, seq: int) -> list[dict[str, Any]] | None:
        """Every event after `seq` of a run recorded here (the tail holds all of them), or None: read the database."""
        committed = self._recording.get(run_id)
        if committed is None or seq < committed:
            return None
        return self.after(run_id, seq)

    def add(self, run_id: str, events: list[dict[str, Any]]) -> None:
        self._by_run.setdefault(run_id, []).extend(events)

    def after(self, run_id: str, seq: int) -> list[dict[str, Any]]:
        """The unsaved events with a seq above `seq`, in order (a copy: the caller may await before using it)."""
        return [event for event in self._by_run.get(run_id, ()) if event["seq"] > seq]

    def saved(self, run_id: str, seq: int) -> None:
        """Everything up to `seq` is committed (or given up on): drop it from the tail."""
        if run_id in self._recording:
            self._recording[run_id] = max(self._recording[run_id], seq)
        events = self._by_run.get(run_id)
        if events is None:
            return
        kept = [event for event in events if event["seq"] > seq]
        if kept:
            self._by_run[run_id] = kept
        else:
            del self._by_run[run_id]

    def __len__(self) -> int:
        return sum(len(events) for events in self._by_run.values())
