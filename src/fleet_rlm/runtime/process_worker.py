"""The worker side of `ProcessRuntime`: one spawned process that runs turns with its own `TurnRuntime` and pool.

It reads commands from its pipe (run, cancel, prepare, end_session, shutdown), runs each turn on a thread of its own and
sends every event, LM recording and the final `TurnResult` back over a second, one-way pipe (the API reads that one in
its event loop, non-blocking: `runtime/pipe_frames.py`). Everything that crosses is
plain data (pickled dataclasses and pydantic events); the LM profiles arrive resolved, keys in memory only, and a
replay's recorded responses arrive as its `ReplayScript` (its outcome goes back just before its result).
Its log records cross too (`PipeLogHandler`), and it answers the API's questions about its sandbox pool.

Sending combines: a thread queues its message, and if no other thread is writing the pipe it writes everything
queued, as one message (a list, in order), at once; else the thread that is writing takes it along. A thread
never waits for another to write. Two designs measured worse under ~25 turns per worker: turn threads that
each wrote under the pipe's lock queued on it (p99 ~70 ms from an event's timestamp to its write, a long
recording blocking everyone), and one sender thread had to win the GIL from the turn threads for every batch
(p99 ~70 ms again); the emitting thread already holds the GIL.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.llm.profiles import LMProfile
from fleet_rlm.llm.roles import Role
from fleet_rlm.runtime.contracts import CancelToken, TurnRequest, TurnResult
from fleet_rlm.runtime.errors import TurnAlreadyRunning
from fleet_rlm.runtime.programs import ProgramSpec

if TYPE_CHECKING:
    from fleet_rlm.runtime.replay_lm import ReplayScript
from fleet_rlm.runtime.warm import own_heap, settle_heap, warm_in_background

log = logging.getLogger(__name__)

WORKER_NICE = 10  # below the API process (0): delivery first, computation with what is left


@dataclass(frozen=True)
class PortableError:
    """A FleetError as data (its subclass may not pickle); raised again as a FleetError with the same code."""

    code: str
    message: str
    action: str | None = None
    status: int = 500

    @classmethod
    def of(cls, exc: FleetError) -> PortableError:
        return cls(exc.code, exc.message, exc.action, exc.status)

    def error(self) -> FleetError:
        return FleetError(self.message, code=self.code, action=self.action, status=self.status)


@dataclass(frozen=True)
class PortableTurn:
    """A turn as data: the request without its provider closure, plus what the closure would have resolved."""

    request: TurnRequest
    profiles: Mapping[Role, LMProfile] | None = None
    """The caller's resolved profiles; None (and no `profile_error`) uses the worker's server settings."""
    profile_error: PortableError | None = None
    programs: dict[tuple[str, str | None], ProgramSpec] = field(default_factory=dict)
    """(module, version or None for the active one) -> spec, snapshotted from the API's registry."""
    records: bool = False
    """The API-side sink stores LM recordings, so the worker's sink offers `record_lm` too."""
    replay: ReplayScript | None = None
    """A replay's recorded responses: the worker's LMs answer from them (and never reach a model)."""


class SnapshotPrograms:
    """The API's program registry as it answered for this turn's modules."""

    def __init__(self, specs: dict[tuple[str, str | None], ProgramSpec]) -> None:
        self.specs = specs

    def get(self, module: str, version: str | None = None) -> ProgramSpec | None:
        return self.specs.get((module, version))


class _PipeSink:
    def __init__(self, send: Any, key: str) -> None:
        self._send = send
        self._key = key

    def emit(self, event: Any) -> None:
        self._send(("event", self._key, event))


class _RecordingPipeSink(_PipeSink):
    def record_lm(self, item: Any) -> None:
        self._send(("record", self._key, item))


def _provider(turn: PortableTurn, settings: Settings) -> Any:
    from fleet_rlm.llm.provider import ProfilesProvider

    if turn.profile_error is not None:
        failure = turn.profile_error

        def refuse() -> Mapping[Role, LMProfile]:
            raise failure.error()

        return ProfilesProvider(refuse, settings)
    if turn.profiles is not None:
        profiles = dict(turn.profiles)
        return ProfilesProvider(lambda: profiles, settings)
    return None


class PipeLogHandler(logging.Handler):
    """Sends the worker's log records to the API process, whose own handlers (its log file, the terminal)
    write them: a worker never writes to the terminal of an in-process CLI, and one server has one log."""

    def __init__(self, send: Any) -> None:
        super().__init__()
        self._send = send

    def emit(self, record: logging.LogRecord) -> None:
        try:
            plain = (str, int, float, bool, type(None))  # an `extra=` object may not pickle: its text crosses
            fields = {k: v if isinstance(v, plain) else str(v) for k, v in vars(record).items()}
            fields.update(msg=record.getMessage(), args=None, exc_info=None)
            if record.exc_info and not record.exc_text:
                fields["exc_text"] = logging.Formatter().formatException(record.exc_info)
            self._send(("log", "", fields))
        except Exception:
            self.handleError(record)


class Outbox:
    """The worker's side of the pipe, shared by every thread (see the module docstring: sending combines)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.queued: collections.deque[tuple[Any, ...]] = collections.deque()
        self.writing = threading.Lock()

    def send(self, message: tuple[Any, ...]) -> None:
        """Queue `message`; write the queue now unless another thread is writing it (it then takes this too).

        After releasing the lock a writer looks at the queue again: a message queued while it wrote, by a
        thread that found the lock taken, is never left behind."""
        self.queued.append(message)
        while self.queued and self.writing.acquire(blocking=False):
            try:
                while self.queued:
                    self._write([self.queued.popleft() for _ in range(len(self.queued))])
            finally:
                self.writing.release()

    def _write(self, batch: list[tuple[Any, ...]]) -> None:
        try:
            self.conn.send(batch)
        except (OSError, ValueError):  # the API process is gone; the turns' work is abandoned
            pass
        except Exception:  # a message that does not pickle: the others of the batch still go, one by one
            for message in batch:
                try:
                    self.conn.send([message])
                except (OSError, ValueError):
                    return
                except Exception as exc:
                    log.error(
                        "dropped a %s message of turn %s that cannot cross the pipe: %s", message[0], message[1], exc
                    )


class _Worker:
    def __init__(self, conn: Connection, out: Connection, settings: Settings) -> None:
        from fleet_rlm.llm.provider import settings_provider
        from fleet_rlm.runtime.gate import TurnGate
        from fleet_rlm.sandbox import build_pool

        self.conn = conn
        self.settings = settings
        self.pool = build_pool(settings)
        self.gate = TurnGate()
        self.default_provider = settings_provider(settings)
        self.tokens: dict[str, CancelToken] = {}
        self.outbox = Outbox(out)
        logging.getLogger().addHandler(PipeLogHandler(self.send))

    def send(self, message: tuple[Any, ...]) -> None:
        self.outbox.send(message)

    def run(self, key: str, turn: PortableTurn) -> None:
        from fleet_rlm.runtime.turn import TurnRuntime

        token = self.tokens[key]
        runtime = TurnRuntime(
            self.settings,
            pool=self.pool,
            lm_provider=self.default_provider,
            programs=SnapshotPrograms(turn.programs),
            gate=self.gate,
        )
        sink = _RecordingPipeSink(self.send, key) if turn.records else _PipeSink(self.send, key)
        request = turn.request
        replay = None
        provider: Any = _provider(turn, self.settings)
        if turn.replay is not None:
            from fleet_rlm.runtime.replay_lm import ReplayProvider

            provider = replay = ReplayProvider.from_script(turn.replay, token)
        if provider is not None:
            request = TurnRequest(**{**request.__dict__, "lm_provider": provider})
        try:
            result: TurnResult | None = runtime.run_turn(request, sink, token)
            if replay is not None:
                self.send(("replay", key, replay.book.outcome()))
            self.send(("result", key, result))
        except TurnAlreadyRunning as exc:
            self.send(("busy", key, exc.details.get("run_id", "")))
        except BaseException as exc:  # run_turn reports its own failures; this is a bug, reported as data
            self.send(("crash", key, f"{type(exc).__name__}: {exc}"))
        finally:
            self.tokens.pop(key, None)
            settle_heap()  # a finished turn imported what the warm-up imports (once; runtime/warm.py)

    def serve(self) -> None:
        self.send(("ready", "", None))
        warm_in_background()  # else the first turns of a burst pay the imports and the price map here
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):
                break
            kind, key, payload = message
            if kind == "run":
                self.tokens[key] = CancelToken()
                threading.Thread(target=self.run, args=(key, payload), name=f"turn-{key}", daemon=True).start()
            elif kind == "cancel":
                token = self.tokens.get(key)
                if token is not None:
                    token.cancel(payload or "cancelled by request")
            elif kind == "prepare":  # a turn that runs code is on its way: start its session's sandbox now
                self.pool.prepare(*payload)
            elif kind == "end_session":
                self.pool.end_session(payload)
            elif kind == "pool":  # the API lists or counts sandboxes (ProcessRuntime.pool)
                self.send(("pool", key, (self.pool.leases(), self.pool.stats())))
            elif kind == "shutdown":
                break
        for token in list(self.tokens.values()):
            token.cancel("the server stopped before the turn finished")
        self.pool.shutdown()


def worker_main(conn: Connection, out: Connection, settings: Settings) -> None:
    """Entry point of a spawned turn process.

    It lowers its own CPU priority first (and its sandboxes inherit it): under load the API process, which only
    delivers events and answers requests, then gets a core as soon as it has work, so live delivery does not
    queue behind the turns' computation; the turns still use every idle cycle.
    """
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICE)
    own_heap()  # the warm-up then freezes the imported heap and makes full collections rare (runtime/warm.py)
    logging.getLogger().setLevel(settings.log_level.upper())  # records go to the API process (PipeLogHandler)
    _Worker(conn, out, settings).serve()
