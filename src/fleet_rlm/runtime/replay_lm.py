"""Serve a recorded run's LM responses by request hash: the LMs of a replay, which never touch the network.

A `ReplayBook` holds the recorded exchanges; each role's `ReplayLM` renders its request exactly as
`RecordingLM` did, hashes it and takes the next unused exchange with that hash. Matching by hash, not by
position, is what makes concurrent calls (llm_query_batched, parallel children) replayable in any order;
identical requests are served in recorded order. A request the recording does not hold is the divergence:
the book keeps the first one (with the closest recorded request and a unified diff of the messages), cancels
the turn and the call fails. Usage recorded with each exchange is reported again, so budgets behave alike.

A replay runs where every turn runs, in a turn worker process: `ReplayProvider` crosses to it as data (its
`ReplayScript`: the recorded exchanges and LM identities), the worker serves the calls from a book of its own and
sends back a `ReplayOutcome` (calls made, the divergence), which the caller's provider adopts. With turns in
threads of this process (FLEET_TURN_PROCESSES=0) the provider serves directly.
"""

from __future__ import annotations

import copy
import difflib
import os
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import dspy
from dspy.utils.callback import with_callbacks

from fleet_rlm.runtime.contracts import CancelToken
from fleet_rlm.runtime.lm_exchange import LMExchange, canonical_request, request_hash

MAX_DIFF_LINES = 400
MAX_CANDIDATES = 64


class ReplayDiverged(RuntimeError):
    """The replay asked for a request the recording does not hold."""


class ReplayedError(RuntimeError):
    """The recorded call failed; the replay fails it the same way."""


@dataclass(frozen=True)
class Divergence:
    reason: str  # "unrecorded_request" | "not_stored" | "missing_calls"
    role: str
    index: int  # the replay's n-th LM call (1-based); for missing_calls, how many it made
    role_index: int  # the n-th call of this role in the replay
    recorded_seq: int | None  # the closest recorded exchange
    recorded_role: str | None
    request_hash: str | None
    diff: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def message_lines(request: dict[str, Any] | None) -> list[str]:
    """The request's messages as readable lines (one header per message), then its parameters."""
    if request is None:
        return ["(request not stored: the recording was over recording_max_bytes)"]
    lines: list[str] = [f"model: {request.get('model')}"]
    for i, message in enumerate(request.get("messages") or []):
        role = message.get("role", "?") if isinstance(message, dict) else "?"
        content = message.get("content", message) if isinstance(message, dict) else message
        lines.append(f"--- message {i} ({role}) ---")
        text = content if isinstance(content, str) else repr(content)
        lines.extend(text.splitlines() or [""])
    params = request.get("params") or {}
    if params:
        lines.append("--- params ---")
        lines.extend(f"{k}: {params[k]!r}" for k in sorted(params))
    return lines


def unified(recorded: dict[str, Any] | None, replayed: dict[str, Any] | None, *, seq: int | None) -> str:
    diff = list(
        difflib.unified_diff(
            message_lines(recorded),
            message_lines(replayed),
            fromfile=f"recorded #{seq}" if seq else "recorded",
            tofile="replayed",
            lineterm="",
            n=2,
        )
    )
    if len(diff) > MAX_DIFF_LINES:
        diff = [*diff[:MAX_DIFF_LINES], f"... ({len(diff) - MAX_DIFF_LINES} more diff lines)"]
    return "\n".join(diff)


class ReplayBook:
    """The recorded exchanges of one run, consumed by hash; thread-safe."""

    def __init__(self, exchanges: Iterable[LMExchange], cancel: CancelToken) -> None:
        self.exchanges = sorted(exchanges, key=lambda e: e.seq)
        self.cancel = cancel
        self._lock = threading.Lock()
        self._by_hash: dict[str, deque[LMExchange]] = {}
        for exchange in self.exchanges:
            self._by_hash.setdefault(exchange.request_hash, deque()).append(exchange)
        self._used: set[int] = set()
        self._per_role: dict[str, int] = {}
        self.calls = 0
        self.divergence: Divergence | None = None
        self.adopted: ReplayOutcome | None = None  # the outcome of a book that served the calls elsewhere

    def models(self) -> dict[str, str]:
        """role -> the model it was recorded with (a replay LM speaks as that model)."""
        out: dict[str, str] = {}
        for exchange in self.exchanges:
            if exchange.request is not None:
                out.setdefault(exchange.role, str(exchange.request.get("model", "")))
        return out

    def serve(self, role: str, request: dict[str, Any]) -> LMExchange:
        digest = request_hash(request)
        with self._lock:
            self.calls += 1
            index = self.calls
            role_index = self._per_role[role] = self._per_role.get(role, 0) + 1
            queue = self._by_hash.get(digest)
            exchange = queue.popleft() if queue else None
            if exchange is not None:
                self._used.add(exchange.seq)
                if exchange.response is not None or exchange.error is not None:
                    return exchange
                divergence = Divergence("not_stored", role, index, role_index, exchange.seq, exchange.role, digest, "")
            else:
                nearest = self._nearest(role, request)
                divergence = Divergence(
                    "unrecorded_request",
                    role,
                    index,
                    role_index,
                    nearest.seq if nearest else None,
                    nearest.role if nearest else None,
                    digest,
                    unified(nearest.request if nearest else None, request, seq=nearest.seq if nearest else None),
                )
            first = self.divergence is None
            if first:
                self.divergence = divergence
        if first:
            self.cancel.cancel(f"replay diverged at LM call {index} ({role})")
        raise ReplayDiverged(f"LM call {index} ({role}) is not in the recording")

    def _nearest(self, role: str, request: dict[str, Any]) -> LMExchange | None:
        """The unused recorded request of this role most like `request` (any unused one, else any at all)."""
        unused = [e for e in self.exchanges if e.seq not in self._used and e.request is not None]
        pool = [e for e in unused if e.role == role] or unused or [e for e in self.exchanges if e.request]
        if not pool:
            return None
        target = "\n".join(message_lines(request))

        def score(exchange: LMExchange) -> float:
            return difflib.SequenceMatcher(None, "\n".join(message_lines(exchange.request)), target).quick_ratio()

        return max(pool[:MAX_CANDIDATES], key=score)

    def outcome(self) -> ReplayOutcome:
        """What a worker sends back when its turn has ended: the calls it served and the divergence."""
        divergence = self.finish()
        with self._lock:
            return ReplayOutcome(calls=self.calls, divergence=divergence, pid=os.getpid())

    def adopt(self, outcome: ReplayOutcome) -> None:
        """Take the outcome of the book that served this replay in a turn worker."""
        with self._lock:
            self.adopted = outcome
            self.calls = outcome.calls
            self.divergence = outcome.divergence

    def finish(self) -> Divergence | None:
        """The first divergence; or, when the replay made fewer calls than the run, the first one it skipped."""
        with self._lock:
            if self.divergence is not None or self.adopted is not None:
                return self.divergence
            missing = [e for e in self.exchanges if e.seq not in self._used]
            if not missing:
                return None
            first = missing[0]
            self.divergence = Divergence(
                "missing_calls",
                first.role,
                self.calls,
                self._per_role.get(first.role, 0),
                first.seq,
                first.role,
                first.request_hash,
                f"the replay ended after {self.calls} LM calls; the run made {len(self.exchanges)} "
                f"({len(missing)} never requested, first: #{first.seq} {first.role})",
            )
            return self.divergence


class ReplayLM(dspy.BaseLM):
    """A BaseLM answering from a ReplayBook (callbacks fire as for a real LM; usage is the recorded one)."""

    def __init__(
        self, book: ReplayBook, role: str, identity: dict[str, Any], kwargs: dict[str, Any] | None = None
    ) -> None:
        super().__init__(
            model=identity["model"], model_type=identity.get("model_type", "chat"), cache=False, num_retries=0
        )
        self.kwargs = dict(kwargs or {})
        self.book = book
        self.role = role
        self.identity = identity

    @property
    def supports_function_calling(self) -> bool:
        return bool(self.identity.get("supports_function_calling"))

    @property
    def supports_reasoning(self) -> bool:
        return bool(self.identity.get("supports_reasoning"))

    @property
    def supports_response_schema(self) -> bool:
        return bool(self.identity.get("supports_response_schema"))

    @property
    def supported_params(self) -> set[str]:
        return set(self.identity.get("supported_params") or ())

    @with_callbacks
    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        exchange = self.book.serve(self.role, canonical_request(self, prompt, messages, kwargs))
        if exchange.error is not None:
            raise ReplayedError(exchange.error)
        response = exchange.response or {}
        tracker = dspy.settings.get("usage_tracker")
        if tracker is not None and response.get("usage"):
            tracker.add_usage(self.model, dict(response["usage"]))
        return copy.deepcopy(response.get("outputs"))

    async def acall(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        return self(prompt, messages=messages, **kwargs)

    def copy(self, **kwargs: Any) -> ReplayLM:
        clone = ReplayLM(self.book, self.role, self.identity, {**self.kwargs, **kwargs})
        clone.callbacks = list(self.callbacks)
        return clone


@dataclass(frozen=True)
class ReplayScript:
    """A replay's recorded responses as data: what crosses to the turn worker that runs the replay."""

    exchanges: tuple[LMExchange, ...]
    lm_models: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReplayOutcome:
    """What the worker's book saw: the calls it served, the first divergence, and the process that served them."""

    calls: int
    divergence: Divergence | None
    pid: int


class ReplayProvider:
    """role -> ReplayLM presenting the recorded LM (`lm_models`: role -> `lm_identity`, as the recording noted it),
    with the recorded generation parameters. A turn runtime in this process calls it; `ProcessRuntime` sends its
    `script()` to a worker instead and hands the worker's outcome to `adopt`."""

    def __init__(self, book: ReplayBook, lm_models: dict[str, dict[str, Any]] | None = None) -> None:
        self.book = book
        self.lm_models = dict(lm_models or {})
        self._models = {role: {"model": model} for role, model in book.models().items()} | self.lm_models
        self._fallback = next(iter(self._models.values()), {"model": "replay/unknown"})
        self._params = _params_by_role(book)

    def __call__(self, role: str) -> dspy.BaseLM:
        return ReplayLM(self.book, role, self._models.get(role, self._fallback), self._params.get(role))

    def script(self) -> ReplayScript:
        return ReplayScript(tuple(self.book.exchanges), self.lm_models)

    def adopt(self, outcome: ReplayOutcome) -> None:
        self.book.adopt(outcome)

    @classmethod
    def from_script(cls, script: ReplayScript, cancel: CancelToken) -> ReplayProvider:
        """The worker's provider: a book of its own over the script, cancelling the worker's turn on divergence."""
        return cls(ReplayBook(script.exchanges, cancel), script.lm_models)


def replay_provider(book: ReplayBook, lm_models: dict[str, dict[str, Any]] | None = None) -> ReplayProvider:
    return ReplayProvider(book, lm_models)


def _params_by_role(book: ReplayBook) -> dict[str, dict[str, Any]]:
    """The LM-level parameters (temperature, max_tokens...) each role was recorded with, so the replayed
    requests render the same parameters."""
    out: dict[str, dict[str, Any]] = {}
    for exchange in book.exchanges:
        out.setdefault(exchange.role, dict(exchange.lm_params))
    return out
