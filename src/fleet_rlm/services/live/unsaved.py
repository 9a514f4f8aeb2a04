"""Events delivered live before their transaction committed: the tail a follower reads after the database.

A run's recorder hands each event to this process's subscribers as soon as it is emitted and has it written in
the background (services/turns/event_writer.py). Until that write commits, the event exists only here; a
follower filling a gap takes a snapshot of this tail *before* it reads the database, so every event is in one
of the two: committed before the read (the database has it) or still unsaved at the snapshot (the tail has it).
"""

from __future__ import annotations

from typing import Any


class UnsavedEvents:
    """Per run: event JSON (each with `seq`, ascending) not yet known to be committed."""

    def __init__(self) -> None:
        self._by_run: dict[str, list[dict[str, Any]]] = {}

    def add(self, run_id: str, events: list[dict[str, Any]]) -> None:
        self._by_run.setdefault(run_id, []).extend(events)

    def after(self, run_id: str, seq: int) -> list[dict[str, Any]]:
        """The unsaved events with a seq above `seq`, in order (a copy: the caller may await before using it)."""
        return [event for event in self._by_run.get(run_id, ()) if event["seq"] > seq]

    def saved(self, run_id: str, seq: int) -> None:
        """Everything up to `seq` is committed (or given up on): drop it from the tail."""
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
