"""Drive one turn through the API: stream it into a renderer, cancel it on Ctrl-C, resume a dropped stream.

Ctrl-C while a turn streams sends the durable cancel (PUT /runs/{id}/cancellation) and keeps following the run
until its terminal event, so the session stays consistent; a second Ctrl-C stops following (the server still
finishes the cancel). Shared by the chat and `fleet-rlm run`.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

from fleet_rlm.cli.client import FleetClient, StreamState
from fleet_rlm.cli.render import TurnOutcome, TurnRenderer
from fleet_rlm.errors import FleetError
from fleet_rlm.events import TERMINAL_TYPES, Event

MAX_RESUMES = 3
Notice = Callable[[str], None]


LEAVE_HINT = "(Ctrl-C again, Ctrl-D or /exit to leave)"


@contextlib.contextmanager
def deferred_sigint(notice: Notice) -> Iterator[None]:
    """Hold Ctrl-C while a finished turn is rendered and its stream closed: a Ctrl-C landing there was meant for
    the turn, which has ended, and raised inside the stream's cleanup it would be lost in a traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda *_: pending.append(1))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if pending:
            notice(f"the turn had already ended {LEAVE_HINT}")


def _consume(events: Iterator[Event], renderer: TurnRenderer, state: StreamState, notice: Notice) -> None:
    for event in events:
        if event.type in TERMINAL_TYPES:
            with deferred_sigint(notice):
                renderer.handle(event)
                state.terminal = event
                close = getattr(events, "close", None)
                if close is not None:
                    close()
            return
        renderer.handle(event)


def drive_turn(
    client: FleetClient,
    renderer: TurnRenderer,
    *,
    session_id: str,
    body: dict[str, Any] | None = None,
    run_id: str | None = None,
    notice: Notice,
) -> TurnOutcome:
    """Start a turn with `body` (or follow `run_id`) and render it to the end. Returns the outcome."""
    state = StreamState(run_id=run_id)
    if body is not None:
        events = client.start_turn(session_id, body, state)
    else:
        assert run_id is not None
        events = client.follow_run(run_id, state)
    cancelling = False
    resumes = 0
    while True:
        try:
            _consume(events, renderer, state, notice)
        except KeyboardInterrupt:
            if cancelling:
                notice("stopped following; the run is still being cancelled on the server")
                renderer.outcome.status = "cancelled"
                break
            cancelling = True
            target = state.run_id or client.active_run(session_id)
            if target is None:
                notice("nothing to cancel: the turn had not started")
                renderer.outcome.status = "cancelled"
                break
            state.run_id = target
            if client.cancel_run(target) is None:
                notice("the turn had already ended; nothing to cancel")
            else:
                notice("cancelling the turn… (Ctrl-C again to stop waiting)")
        if state.terminal is not None:
            break
        if state.run_id is None or resumes >= MAX_RESUMES:
            break
        if not cancelling:
            resumes += 1
        events = client.follow_run(state.run_id, state, after=state.last_seq)
    renderer.outcome.run_id = renderer.outcome.run_id or state.run_id
    renderer.outcome.session_id = renderer.outcome.session_id or session_id
    if state.terminal is None and renderer.outcome.status == "unknown":
        renderer.outcome.error = {
            "code": "stream_ended",
            "message": "the event stream ended before the turn did",
            "action": f"follow it with `fleet-rlm chat --session {session_id}`",
        }
    return renderer.outcome


def safe(call: Callable[[], Any], notice: Notice) -> Any:
    """Run a client call; print a user-facing failure as one line instead of raising it."""
    try:
        return call()
    except FleetError as exc:
        notice(exc.one_line())
        return None
