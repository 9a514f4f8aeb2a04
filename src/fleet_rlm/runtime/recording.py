"""Record every LM exchange of a turn (root, sub-LM, children, router) so the run can be replayed offline.

`RecordingLM` sits between a role's `GuardedLM` and the real LM, so it sees exactly what DSPy renders for the
provider: the model, the messages and the merged generation parameters. It stores them minus every client
setting (api_key, api_base, headers, timeout...), with the values of the LM's own secrets scrubbed from the
text too, and keys the request by the sha256 of its canonical JSON (`request_hash`), which is what a replay
matches on. The response is recorded as DSPy's outputs plus the call's usage, so a replay goes through the same
adapters, callbacks and budgets. The runtime never stores anything: each item goes to the turn's sink
(`RecordingSink.record`), which persists it with the run. Bytes are bounded per run; past the bound an
exchange is kept by hash only (`truncated`).
"""

from __future__ import annotations

import contextvars
import hashlib
import itertools
import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

import dspy
import pydantic

from fleet_rlm.runtime.contracts import ContextSource, HistoryTurn, TurnOptions, TurnRequest

CLIENT_KEYS = frozenset(
    {
        "api_key",
        "api_base",
        "base_url",
        "headers",
        "extra_headers",
        "default_headers",
        "timeout",
        "api_version",
        "azure_ad_token_provider",
        "azure_ad_token",
        "organization",
        "project",
        "extra_query",
        "custom_llm_provider",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "vertex_credentials",
        "num_retries",
        "cache",
        "engine",
    }
)
"""Connection and execution settings: never part of a recorded request (and never stored)."""
SECRETISH = re.compile(r"(key|token|secret|passw|auth|credential|cookie|bearer)", re.IGNORECASE)
REDACTED = "[REDACTED]"
MIN_SECRET_CHARS = 8  # "EMPTY" (the placeholder key of local servers) is not scrubbed from texts

ACTOR: contextvars.ContextVar[tuple[str, int]] = contextvars.ContextVar("fleet_recording_actor", default=("root", 0))
"""(actor, depth) of the code making LM calls; run_rlm sets it for children so exchanges are attributed."""


def jsonable(value: Any) -> Any:
    """A JSON-safe copy (pydantic models and classes by their schema, anything else by its text)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, type) and issubclass(value, pydantic.BaseModel):
        return {"json_schema": value.model_json_schema(), "name": value.__name__}
    if isinstance(value, pydantic.BaseModel):
        return jsonable(value.model_dump(mode="json"))
    return str(value)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def public_params(params: dict[str, Any]) -> dict[str, Any]:
    """Generation parameters without client settings or anything named like a credential."""
    return {
        k: jsonable(v) for k, v in params.items() if v is not None and k not in CLIENT_KEYS and not SECRETISH.search(k)
    }


def canonical_request(lm: Any, prompt: Any, messages: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The request as DSPy sends it (model, rendered messages, merged parameters) minus client settings."""
    params = public_params({**(getattr(lm, "kwargs", None) or {}), **kwargs})
    rendered = messages if messages is not None else [{"role": "user", "content": prompt}]
    return {
        "model": str(getattr(lm, "model", "")),
        "model_type": str(getattr(lm, "model_type", "chat")),
        "messages": jsonable(rendered),
        "params": params,
    }


def request_hash(request: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


def secrets_of(lm: Any) -> set[str]:
    """Secret values configured on an LM (its api_key and any other key-like setting)."""
    found: set[str] = set()
    for key, value in (getattr(lm, "kwargs", None) or {}).items():
        if (key in CLIENT_KEYS or SECRETISH.search(key)) and isinstance(value, str) and len(value) >= MIN_SECRET_CHARS:
            found.add(value)
        if isinstance(value, dict) and key in CLIENT_KEYS:  # headers: every value may carry a credential
            found.update(v for v in value.values() if isinstance(v, str) and len(v) >= MIN_SECRET_CHARS)
    return found


@dataclass(frozen=True)
class TurnInputs:
    """What a replay needs to rebuild the turn: the request minus its LMs (no secrets in a TurnRequest)."""

    inputs: dict[str, Any]


@dataclass(frozen=True)
class LMExchange:
    """One LM call. `request` / `response` are None when the run's byte budget was spent (`truncated`)."""

    seq: int
    role: str
    actor: str
    depth: int
    request_hash: str
    request: dict[str, Any] | None
    response: dict[str, Any] | None
    error: str | None = None
    truncated: bool = False
    lm_params: dict[str, Any] = field(default_factory=dict)
    """The LM's own parameters (temperature, max_tokens...; no client settings): a replay LM renders with them."""


@dataclass(frozen=True)
class RecordingDone:
    calls: int
    bytes: int
    truncated: bool
    status: str
    answer: str


RecordedItem = TurnInputs | LMExchange | RecordingDone


@runtime_checkable
class RecordingSink(Protocol):
    """An EventSink that also persists recordings (thread-safe, like `emit`)."""

    def record(self, item: RecordedItem) -> None: ...


@dataclass
class LMRecorder:
    deliver: Callable[[RecordedItem], None]
    max_bytes: int
    secrets: set[str] = field(default_factory=set)
    calls: int = 0
    bytes: int = 0
    truncated: bool = False

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._seq = itertools.count(1)

    def wrap(self, lm: dspy.BaseLM, role: str) -> RecordingLM:
        with self._lock:
            self.secrets |= secrets_of(lm)
        return RecordingLM(lm, self, role)

    def next_seq(self) -> int:
        with self._lock:
            return next(self._seq)

    def scrub(self, value: Any) -> Any:
        """`value` with every known secret value replaced (a key echoed in a prompt is not stored either)."""
        text = canonical_json(value)
        with self._lock:
            secrets = sorted(self.secrets, key=len, reverse=True)
        escaped = [json.dumps(s, ensure_ascii=False)[1:-1] for s in secrets]
        if not any(s in text for s in escaped):
            return value
        for secret in escaped:
            text = text.replace(secret, REDACTED)
        return json.loads(text)

    def add(
        self,
        seq: int,
        role: str,
        request: dict[str, Any],
        response: Any,
        error: str | None,
        lm_params: dict[str, Any] | None = None,
    ) -> None:
        actor, depth = ACTOR.get()
        digest = request_hash(request)
        request, response = self.scrub(request), self.scrub(response)
        size = len(canonical_json(request)) + len(canonical_json(response))
        with self._lock:
            self.calls += 1
            keep = self.bytes + size <= self.max_bytes
            self.bytes += size if keep else 0
            self.truncated = self.truncated or not keep
        self.deliver(
            LMExchange(
                seq=seq,
                role=role,
                actor=actor,
                depth=depth,
                request_hash=digest,
                request=request if keep else None,
                response=response if keep else None,
                error=self.scrub(error) if error else None,
                truncated=not keep,
                lm_params=self.scrub(lm_params or {}),
            )
        )

    def done(self, status: str, answer: str) -> None:
        with self._lock:
            calls, size, truncated = self.calls, self.bytes, self.truncated
        self.deliver(RecordingDone(calls, size, truncated, status, self.scrub(answer)))


class _UsageCapture:
    """The usage tracker installed around one call: sums the call's usage and forwards it to the previous one."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous
        self.usage: dict[str, Any] = {}

    def add_usage(self, lm: str, entry: dict[str, Any]) -> None:
        for key, value in (entry or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self.usage[key] = self.usage.get(key, 0) + value
        if self.previous is not None:
            self.previous.add_usage(lm, entry)


class RecordingLM(dspy.BaseLM):
    """Delegates to the real LM's `__call__` (callbacks fire there, once) and records the exchange."""

    def __init__(self, inner: dspy.BaseLM, recorder: LMRecorder, role: str) -> None:
        super().__init__(
            model=inner.model,
            model_type=getattr(inner, "model_type", "chat"),
            cache=getattr(inner, "cache", False),
            num_retries=getattr(inner, "num_retries", 0),
        )
        self.kwargs = inner.kwargs
        self.callbacks: list[Any] = []  # the inner LM's callbacks fire; none here, or they would fire twice
        self.inner = inner
        self.recorder = recorder
        self.role = role

    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        request = canonical_request(self.inner, prompt, messages, kwargs)
        seq = self.recorder.next_seq()
        capture = _UsageCapture(dspy.settings.get("usage_tracker"))
        try:
            with dspy.context(usage_tracker=capture):
                outputs = self.inner(prompt, messages=messages, **kwargs)
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"[:2000]
            self.recorder.add(seq, self.role, request, None, error, public_params(self.inner.kwargs))
            raise
        response = {"outputs": jsonable(outputs), "usage": capture.usage}
        self.recorder.add(seq, self.role, request, response, None, public_params(self.inner.kwargs))
        return outputs

    async def acall(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        import asyncio

        return await asyncio.to_thread(self.__call__, prompt, messages=messages, **kwargs)

    @property
    def supports_function_calling(self) -> bool:
        return bool(self.inner.supports_function_calling)

    @property
    def supports_reasoning(self) -> bool:
        return bool(self.inner.supports_reasoning)

    @property
    def supports_response_schema(self) -> bool:
        return bool(self.inner.supports_response_schema)

    @property
    def supported_params(self) -> set[str]:
        return set(self.inner.supported_params)

    def copy(self, **kwargs: Any) -> RecordingLM:
        return RecordingLM(self.inner.copy(**kwargs), self.recorder, self.role)

    def dump_state(self) -> dict[str, Any]:
        return self.inner.dump_state()

    def __getattr__(self, name: str) -> Any:
        inner = self.__dict__.get("inner")
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)


def turn_inputs(request: TurnRequest) -> TurnInputs:
    """The request's replayable part (task, context sources, history, summary, options, program pins)."""
    return TurnInputs(
        {
            "task": request.task,
            "options": asdict(request.options),
            "sources": [asdict(s) for s in request.sources],
            "history": [asdict(h) for h in request.history],
            "session_summary": request.session_summary,
            "program_versions": dict(request.program_versions),
            "session_id": request.session_id,
            "workspace_id": request.workspace_id,
        }
    )


def request_from_inputs(inputs: dict[str, Any], **fields: Any) -> TurnRequest:
    """A TurnRequest from recorded inputs; `fields` give the ids, workspace and LM provider of the replay."""
    options = dict(inputs.get("options") or {})
    options["skills"] = tuple(options.get("skills") or ())
    return TurnRequest(
        task=str(inputs.get("task", "")),
        options=TurnOptions(**options),
        sources=tuple(ContextSource(**s) for s in inputs.get("sources") or ()),
        history=tuple(HistoryTurn(**h) for h in inputs.get("history") or ()),
        session_summary=str(inputs.get("session_summary") or ""),
        **{"program_versions": dict(inputs.get("program_versions") or {}), **fields},
    )


def recorder_for(sink: Any, *, enabled: bool, max_bytes: int, extra_secrets: Iterable[str] = ()) -> LMRecorder | None:
    """The turn's recorder when the sink persists recordings and recording is on; else None."""
    if not enabled or not isinstance(sink, RecordingSink):
        return None
    return LMRecorder(sink.record, max_bytes, secrets={s for s in extra_secrets if len(s) >= MIN_SECRET_CHARS})
