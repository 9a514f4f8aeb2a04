"""`Emitter`: builds events with the right envelope and hands them to the caller's sink, in order.

One lock per turn serializes emission across threads (children, batched calls), so the sink sees a total order
and the API can number events densely. Once the turn starts closing (`seal`: its usage is counted) only the closing
events pass, and after the terminal event nothing more is emitted: work abandoned by a cancel (an LM call
returning late) cannot append to the stream's end.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, TypeVar

from fleet_rlm.events import TERMINAL_TYPES, EventBase
from fleet_rlm.runtime.contracts import EventSink

CLOSING_TYPES = frozenset({"usage", "summary", *TERMINAL_TYPES})
"""What a sealed stream still delivers: the turn's own closing events."""

logger = logging.getLogger(__name__)
E = TypeVar("E", bound=EventBase)


class _Stream:
    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self.lock = threading.Lock()
        self.closed = False
        self.sealed = False
        self.muted = False
        self.count = 0


class Emitter:
    def __init__(
        self,
        sink: EventSink,
        *,
        run_id: str,
        session_id: str,
        depth: int = 0,
        actor: str = "root",
        parent_id: str | None = None,
        _stream: _Stream | None = None,
    ) -> None:
        self.run_id = run_id
        self.session_id = session_id
        self.depth = depth
        self.actor = actor
        self.parent_id = parent_id
        self._stream = _stream or _Stream(sink)

    def emit(self, cls: type[E], **payload: Any) -> E | None:
        """Build and deliver one event; returns it, or None when the stream is already closed."""
        envelope = {"depth": self.depth, "actor": self.actor, "parent_id": self.parent_id}
        envelope.update({k: payload.pop(k) for k in ("actor", "parent_id", "depth") if k in payload})
        event = cls(run_id=self.run_id, session_id=self.session_id, **envelope, **payload)
        stream = self._stream
        with stream.lock:
            if stream.closed or (stream.sealed and event.type not in CLOSING_TYPES):
                return None
            if stream.muted and event.type not in TERMINAL_TYPES:  # a resumed run's already recorded part
                return event
            if event.type in TERMINAL_TYPES:
                stream.closed = True
            stream.count += 1
            try:
                stream.sink.emit(event)  # type: ignore[arg-type]
            except Exception:  # a broken subscriber must not kill the turn
                logger.exception("event sink failed on %s", event.type)
        return event

    def record(self, item: Any) -> None:
        """Hand a recorded item (an LM exchange, a REPL snapshot) to the sink when it persists them."""
        record = getattr(self._stream.sink, "record_lm", None)
        if callable(record) and not self._stream.closed:
            try:
                record(item)
            except Exception:
                logger.exception("event sink failed on a recorded item")

    def child(self, child_id: str, depth: int) -> Emitter:
        """The emitter of a child RLM: its events carry actor child:<id>, parent_id = child id, its depth."""
        return Emitter(
            self._stream.sink,
            run_id=self.run_id,
            session_id=self.session_id,
            depth=depth,
            actor=f"child:{child_id}",
            parent_id=child_id,
            _stream=self._stream,
        )

    def as_actor(self, actor: str) -> Emitter:
        return Emitter(
            self._stream.sink,
            run_id=self.run_id,
            session_id=self.session_id,
            depth=self.depth,
            actor=actor,
            parent_id=self.parent_id,
            _stream=self._stream,
        )

    def seal(self) -> None:
        """The turn is closing: from now on only its usage, summary and terminal event are delivered (a call still
        in flight that ends now must not land between them)."""
        with self._stream.lock:
            self._stream.sealed = True

    def mute(self, muted: bool = True) -> None:
        """While muted, only a terminal event reaches the sink (a resumed run replaying what it recorded)."""
        self._stream.muted = muted

    def unmute(self) -> None:
        self.mute(False)

    @property
    def closed(self) -> bool:
        return self._stream.closed

    @property
    def count(self) -> int:
        return self._stream.count
