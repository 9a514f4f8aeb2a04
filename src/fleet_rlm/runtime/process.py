"""`ProcessRuntime`: the `Runtime` protocol over N spawned worker processes (one per core unless
`FLEET_TURN_PROCESSES` says otherwise; 0 runs turns in threads of the API process instead).

Why: a turn's DSPy work (adapter, LiteLLM, parsing) is CPU in Python; in threads of the API process it holds
the GIL the event loop needs, so under load live delivery queues behind computation. Here the API process only
forwards: each turn runs in a worker (`process_worker`), its events and LM recordings stream back over a pipe
into the caller's sink. A session always goes to the same worker (its REPL state lives in that worker's pool).
A cancel is forwarded; a worker that dies fails its running turns with `turn_worker_died` (never a hang) and is
started again for the next turn (that session's REPL state is gone, its files are kept). Every turn's LM
provider crosses as data: the caller's profiles resolved (`profiles()`), or a replay's recorded responses
(`script()`, whose worker sends the replay's outcome back to the provider's `adopt`), so a replay runs in a worker
like any turn and never in the API process.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import threading
import uuid
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.events import ErrorEvent, TurnFailed
from fleet_rlm.runtime.contracts import CancelToken, EventSink, LiveSandboxes, TurnRequest, TurnResult
from fleet_rlm.runtime.errors import TurnAlreadyRunning
from fleet_rlm.runtime.pipe_frames import LoopReader
from fleet_rlm.runtime.process_worker import PortableError, PortableTurn, worker_main
from fleet_rlm.runtime.programs import MODULES, ProgramRegistry
from fleet_rlm.runtime.recording import RecordingSink

logger = logging.getLogger(__name__)
WORKER_DIED = "turn_worker_died"
POOL_QUERY_TIMEOUT_S = 2.0  # a worker that does not answer about its sandboxes in time shows none
PRELOAD = ("fleet_rlm.runtime.process_worker", "fleet_rlm.runtime.turn", "fleet_rlm.llm.pricing")
"""What the fork server imports once, before it forks any worker: the turn path (not LiteLLM: llm/pricing.py)."""


def _start_context() -> Any:
    """Workers fork from a fork server that imported PRELOAD once (multiprocessing's "forkserver"): a worker then
    starts in milliseconds with the modules in place, shares their pages with its siblings, and pays nothing for
    seconds of imports (compiling them, where no bytecode can be cached). "spawn" where there is no fork server."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))
    return context


if TYPE_CHECKING:
    from fleet_rlm.sandbox.pool import LeaseInfo


@dataclass
class _Pending:
    request: TurnRequest
    sink: EventSink
    done: threading.Event = field(default_factory=threading.Event)
    result: TurnResult | None = None
    busy_run: str | None = None
    failure: str | None = None


class _Incarnation:
    """One started worker process: its command pipe, the pipe it answers on and who reads that (the event loop,
    `pipe_frames.LoopReader`, else a thread of its own), the turns it is running."""

    def __init__(self, index: int, settings: Settings, loop: asyncio.AbstractEventLoop | None) -> None:
        context = _start_context()
        self.conn, child = context.Pipe()
        self.inbox, outbox = context.Pipe(duplex=False)
        self.process = context.Process(
            target=worker_main, args=(child, outbox, settings), name=f"fleet-turns-{index}", daemon=True
        )
        self.process.start()
        child.close()
        outbox.close()
        self.pending: dict[str, _Pending] = {}
        self.queries: dict[str, tuple[threading.Event, list[Any]]] = {}  # key -> (answered, [answer])
        self.lock = threading.Lock()
        self.dead = False
        if loop is not None and not loop.is_closed():
            LoopReader(loop, self.inbox, self._take_all, self._ended)
        else:
            threading.Thread(target=self._read, name=f"fleet-turns-{index}-reader", daemon=True).start()

    def send(self, message: tuple[Any, ...]) -> bool:
        with self.lock:
            if self.dead:
                return False
            try:
                self.conn.send(message)
                return True
            except (OSError, ValueError):
                return False

    def start(self, key: str, pending: _Pending, turn: PortableTurn) -> bool:
        with self.lock:
            if self.dead:
                return False
            self.pending[key] = pending
        return self.send(("run", key, turn))

    def _read(self) -> None:
        while True:
            try:
                self._take_all(self.inbox.recv())
            except (EOFError, OSError):
                break
            except Exception:  # an unpicklable or malformed message: the stream is no longer trustworthy
                logger.exception("turn worker %s sent an unreadable message", self.process.pid)
                break
        self.inbox.close()
        self._died()

    def _take_all(self, messages: list[tuple[str, str, Any]]) -> None:
        """One message of the worker: a list, what it had queued, in order."""
        for kind, key, payload in messages:
            self._take(kind, key, payload)

    def _ended(self) -> None:
        """The loop read the pipe's end: the worker is gone. `_died` waits for its exit code, so not on the loop."""
        with self.lock:
            self.dead = True
        threading.Thread(target=self._died, name="fleet-turns-died", daemon=True).start()

    def ask_pool(self) -> tuple[list[LeaseInfo], dict[str, int]] | None:
        """The worker's sandbox leases and pool counts; None when it is gone or does not answer in time."""
        key, answered = uuid.uuid4().hex, threading.Event()
        answer: list[Any] = []
        with self.lock:
            self.queries[key] = (answered, answer)
        try:
            if self.send(("pool", key, None)) and answered.wait(POOL_QUERY_TIMEOUT_S) and answer:
                return answer[0]  # type: ignore[no-any-return]
            return None
        finally:
            with self.lock:
                self.queries.pop(key, None)

    def _take(self, kind: str, key: str, payload: Any) -> None:
        if kind == "log":  # the worker's record, written by this process's handlers
            record = logging.makeLogRecord(payload)
            logging.getLogger(record.name).handle(record)
            return
        if kind == "pool":
            with self.lock:
                query = self.queries.get(key)
            if query is not None:
                query[1].append(payload)
                query[0].set()
            return
        pending = self.pending.get(key)
        if pending is None:
            return
        if kind == "event":
            pending.sink.emit(payload)
        elif kind == "record" and isinstance(pending.sink, RecordingSink):
            pending.sink.record_lm(payload)
        elif kind == "replay":  # the replay's outcome, sent just before its result
            pending.request.lm_provider.adopt(payload)  # type: ignore[union-attr]  # a ReplayProvider's
        else:
            if kind == "result":
                pending.result = payload
            elif kind == "busy":
                pending.busy_run = str(payload)
            else:  # crash
                pending.failure = str(payload)
            with self.lock:
                self.pending.pop(key, None)
            pending.done.set()

    def _died(self) -> None:
        with self.lock:
            self.dead = True
            orphans, self.pending = list(self.pending.values()), {}
            for answered, _ in self.queries.values():
                answered.set()
        if orphans:
            self.process.join(timeout=2)
            logger.warning(
                "turn worker %s exited (%s) with %d turn(s) running",
                self.process.pid,
                self.process.exitcode,
                len(orphans),
            )
        for pending in orphans:
            pending.failure = f"the turn's worker process exited (exit code {self.process.exitcode})"
            pending.done.set()

    def stop(self, timeout_s: float = 10.0) -> None:
        self.send(("shutdown", "", None))  # idempotent: shutdown() sends it to every worker before joining any
        self.process.join(timeout=timeout_s)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout=5)
        self.conn.close()  # `inbox` is closed by its reader, at the end it then reads


class ProcessRuntime:
    """Runs each turn in one of `processes` worker processes; the calling thread waits for its result."""

    def __init__(
        self,
        settings: Settings,
        *,
        processes: int,
        programs: ProgramRegistry | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        """`loop`: the API's event loop, which then reads what the workers send (else a thread per worker does)."""
        if processes < 1:
            raise ValueError("ProcessRuntime needs at least one worker process")
        self.settings = settings
        self.programs = programs
        self.processes = processes
        self._lock = threading.Lock()
        self._workers: list[_Incarnation | None] = [None] * processes
        self._loop = loop
        self.pool: LiveSandboxes = _WorkerSandboxes(self)

    def start_workers(self) -> None:
        """Start every worker now, so their imports are paid before the first turn (the server calls this just
        after startup; a turn that comes first starts its own worker)."""
        for index in range(len(self._workers)):
            self._worker(index)

    def _slot(self, session_id: str) -> int:
        return zlib.crc32(session_id.encode()) % len(self._workers)

    def _worker(self, index: int) -> _Incarnation:
        with self._lock:
            worker = self._workers[index]
            if worker is None or worker.dead:
                worker = self._workers[index] = _Incarnation(index, self.settings, self._loop)
            return worker

    def run_turn(self, request: TurnRequest, sink: EventSink, cancel: CancelToken) -> TurnResult:
        """Run the turn in the session's worker (blocking). Raises only TurnAlreadyRunning."""
        pending = _Pending(request, sink)
        key = uuid.uuid4().hex
        worker = self._worker(self._slot(request.session_id))
        if not worker.start(key, pending, self._portable(request, sink)):
            worker = self._worker(self._slot(request.session_id))  # it had just died: one fresh try
            if not worker.start(key, pending, self._portable(request, sink)):
                pending.failure = "the turn's worker process could not be reached"
                pending.done.set()

        def forward() -> None:
            worker.send(("cancel", key, cancel.reason))

        remove = cancel.on_cancel(forward)
        try:
            pending.done.wait()
        finally:
            remove()
        if pending.busy_run is not None:
            raise TurnAlreadyRunning(request.session_id, pending.busy_run)
        if pending.result is not None:
            return pending.result
        return _failed(request, sink, pending.failure or "the turn's worker process failed")

    def _portable(self, request: TurnRequest, sink: EventSink) -> PortableTurn:
        """The turn as data. Its provider crosses as what it resolves: the caller's profiles, or a replay's script
        (recorded responses); any other provider is a bug (it would have to run here, in the API process)."""
        profiles, error, replay = None, None, None
        provider = request.lm_provider
        if callable(getattr(provider, "script", None)):
            replay = provider.script()  # type: ignore[union-attr]
        elif callable(getattr(provider, "profiles", None)):
            try:
                profiles = provider.profiles()  # type: ignore[union-attr]
            except FleetError as exc:
                error = PortableError.of(exc)
        elif provider is not None:
            raise TypeError(f"the LM provider {type(provider).__name__} cannot cross to a turn worker")
        return PortableTurn(
            request=TurnRequest(**{**request.__dict__, "lm_provider": None}),
            profiles=profiles,
            profile_error=error,
            replay=replay,
            programs=self._program_snapshot(request),
            records=isinstance(sink, RecordingSink),
        )

    def _program_snapshot(self, request: TurnRequest) -> dict[tuple[str, str | None], Any]:
        if self.programs is None:
            return {}
        specs: dict[tuple[str, str | None], Any] = {}
        for module in MODULES:
            for version in {None, request.program_versions.get(module)}:
                spec = self.programs.get(module, version)
                if spec is not None:
                    specs[(module, version)] = spec
        return specs

    def prepare(self, session_id: str, workspace_id: str) -> None:
        """Tell the session's worker to start its sandbox now (it runs the turn's code there)."""
        self._worker(self._slot(session_id)).send(("prepare", "", (session_id, workspace_id)))

    def end_session(self, session_id: str) -> None:
        worker = self._workers[self._slot(session_id)]  # none started: it holds no sandbox
        if worker is not None:
            worker.send(("end_session", "", session_id))

    def shutdown(self) -> None:
        with self._lock:
            workers, self._workers = list(self._workers), [None] * len(self._workers)
        for worker in workers:
            if worker is not None:
                worker.send(("shutdown", "", None))
        for worker in workers:
            if worker is not None:
                worker.stop()


class _WorkerSandboxes:
    """Every turn worker's sandbox pool, seen as one."""

    def __init__(self, runtime: ProcessRuntime) -> None:
        self.runtime = runtime

    def _answers(self) -> list[tuple[list[LeaseInfo], dict[str, int]]]:
        return [a for w in list(self.runtime._workers) if w is not None and (a := w.ask_pool()) is not None]

    def leases(self) -> list[LeaseInfo]:
        return [lease for leases, _ in self._answers() for lease in leases]

    def stats(self) -> dict[str, int]:
        total: dict[str, int] = {"spares": 0, "starting": 0, "leased": 0, "idle": 0}
        for _, stats in self._answers():
            for name, count in stats.items():
                total[name] = total.get(name, 0) + count
        return total

    def end_session(self, session_id: str) -> None:
        self.runtime.end_session(session_id)


def _failed(request: TurnRequest, sink: EventSink, message: str) -> TurnResult:
    """The turn's worker is gone: an `error` event and `turn_failed`, as the runtime itself would end it."""
    envelope = {"run_id": request.run_id, "session_id": request.session_id, "actor": "runner"}
    action = "send the message again; the session's REPL variables are lost, its files are kept"
    sink.emit(ErrorEvent(**envelope, code=WORKER_DIED, message=message))
    sink.emit(TurnFailed(**envelope, code=WORKER_DIED, message=message))
    error = {"code": WORKER_DIED, "message": message, "action": action}
    return TurnResult(status="failed", error=error, execution_mode=request.options.execution_mode)
