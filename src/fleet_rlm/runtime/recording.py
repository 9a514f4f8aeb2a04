"""Record every LM exchange of a turn (root, sub-LM, children, router) so the run can be replayed offline.

`RecordingLM` sits between a role's `GuardedLM` and the real LM, so it sees exactly what DSPy renders for the
provider: the model, the messages and the merged generation parameters. It stores them minus every client
setting (api_key, api_base, headers, timeout...), with the values of every role's secrets redacted from the
string values too (never from a key: a recording's structure is never edited), and keys the request by the sha256
of its canonical JSON (`request_hash`, runtime/lm_exchange.py),
which is what a replay matches on. The response is recorded as DSPy's outputs plus the call's usage, so a
replay goes through the same adapters, callbacks and budgets. The runtime never stores anything: each item
goes to the turn's sink (`RecordingSink.record_lm`), which persists it with the run. Bytes are bounded per
run; past the bound an exchange is kept by hash only (`truncated`).
"""

from __future__ import annotations

import contextvars
import itertools
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import dspy

from fleet_rlm.runtime.lm_exchange import (
    MIN_SECRET_CHARS,
    REDACTED,
    LMExchange,
    RecordedItem,
    RecordingDone,
    RecordingSink,
    TurnInputs,
    canonical_json,
    canonical_request,
    jsonable,
    lm_identity,
    public_params,
    secrets_of,
    text_hash,
)
from fleet_rlm.runtime.lm_wrapper import WrappedLM

SERVED_FROM_RECORDING: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "fleet_served_from_recording", default=False
)
"""Set by a resumed run's LM (runtime/resume_lm.py) when it answered from the run's recording."""

TEXT_INPUTS = frozenset({"task", "session_summary", "history"})
"""Free text among a turn's inputs (what the user or the model wrote): secrets are redacted there."""
TEXT_SOURCE_FIELDS = frozenset({"text"})


def redact_values(value: Any, secrets: Iterable[str]) -> Any:
    """A copy of the JSON-like `value` with each of `secrets` replaced by REDACTED inside its string values;
    mapping keys, numbers and the shape are kept."""
    ordered = sorted(set(secrets), key=len, reverse=True)  # a secret inside a longer one: the longer first

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            for secret in ordered:
                if secret in item:
                    item = item.replace(secret, REDACTED)
            return item
        if isinstance(item, dict):
            return {key: walk(inner) for key, inner in item.items()}
        if isinstance(item, (list, tuple)):
            return [walk(inner) for inner in item]
        return item

    return walk(value)


ACTOR: contextvars.ContextVar[tuple[str, int]] = contextvars.ContextVar("fleet_recording_actor", default=("root", 0))
"""(actor, depth) of the code making LM calls; run_rlm sets it for children so exchanges are attributed."""


@dataclass
class LMRecorder:
    deliver: Callable[[RecordedItem], None]
    max_bytes: int
    secrets: set[str] = field(default_factory=set)
    calls: int = 0
    bytes: int = 0
    truncated: bool = False
    inputs: TurnInputs | None = None  # delivered with `done`, scrubbed of every secret seen by then
    models: dict[str, dict[str, Any]] = field(default_factory=dict)  # role -> lm_identity of its LM

    first_seq: int = 1  # a resumed run numbers its new exchanges after the recorded ones

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._seq = itertools.count(self.first_seq)

    def wrap(self, lm: dspy.BaseLM, role: str) -> RecordingLM:
        with self._lock:
            self.secrets |= secrets_of(lm)
            self.models[role] = lm_identity(lm)
        return RecordingLM(lm, self, role)

    def learn(self, provider: Callable[[str], Any], roles: Iterable[str]) -> None:
        """Learn the secrets of every role's LM up front, so a prompt of one role carrying another role's key
        is scrubbed too (building an LM is local: no request is sent)."""
        for role in roles:
            try:
                lm = provider(role)
            except Exception:  # a role that is not configured has no secret
                continue
            with self._lock:
                self.secrets |= secrets_of(lm)

    def next_seq(self) -> int:
        with self._lock:
            return next(self._seq)

    def scrub(self, value: Any) -> Any:
        """`value` with every known secret value redacted from its string values (a key echoed in a prompt is not
        stored either). Mapping keys are never touched: a secret is a value in a secret's place (an api_key, a
        header value), whatever its text, and a value chosen to look like a key must not edit the structure."""
        return self._scrubbed(canonical_json(value), value)[1]

    def _scrubbed(self, text: str, value: Any) -> tuple[str, Any]:
        """(canonical JSON, value) of `value` scrubbed, from its canonical JSON `text` (made once per body)."""
        with self._lock:
            secrets = sorted(self.secrets, key=len, reverse=True)
        escaped = [json.dumps(s, ensure_ascii=False)[1:-1] for s in secrets]
        if not any(s in text for s in escaped):  # the common case: no secret anywhere, nothing to walk
            return text, value
        scrubbed = redact_values(value, secrets)
        return canonical_json(scrubbed), scrubbed

    def scrub_inputs(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The turn's inputs with secrets redacted from their free text only (the task, the summary, earlier
        turns, a pasted source's text); ids, names, paths, kinds, options and versions are kept as they are, and a
        replay validates them (runtime/replay_inputs.py)."""
        out = {name: self.scrub(value) if name in TEXT_INPUTS else value for name, value in inputs.items()}
        if isinstance(out.get("sources"), list):
            out["sources"] = [
                {k: self.scrub(v) if k in TEXT_SOURCE_FIELDS else v for k, v in source.items()}
                if isinstance(source, dict)
                else source
                for source in out["sources"]
            ]
        return out

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
        request_text = canonical_json(request)  # once per body: hashed, scrubbed and measured from it
        digest = text_hash(request_text)
        request_text, request = self._scrubbed(request_text, request)
        response_text, response = self._scrubbed(canonical_json(response), response)
        size = len(request_text) + len(response_text)
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

    def done(self, status: str, answer: str, programs: dict[str, str] | None = None) -> None:
        if self.inputs is not None:
            with self._lock:
                models = dict(self.models)
            self.deliver(TurnInputs({**self.scrub_inputs(self.inputs.inputs), "lm_models": models}))
        with self._lock:
            calls, size, truncated = self.calls, self.bytes, self.truncated
        self.deliver(RecordingDone(calls, size, truncated, status, self.scrub(answer), dict(programs or {})))


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


class RecordingLM(WrappedLM):
    """Delegates to the real LM's `__call__` (callbacks fire there, once) and records the exchange."""

    def __init__(self, inner: dspy.BaseLM, recorder: LMRecorder, role: str) -> None:
        super().__init__(inner)
        self.recorder = recorder
        self.role = role

    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        request = canonical_request(self.inner, prompt, messages, kwargs)
        seq = self.recorder.next_seq()
        capture = _UsageCapture(dspy.settings.get("usage_tracker"))
        served = SERVED_FROM_RECORDING.set(False)
        try:
            with dspy.context(usage_tracker=capture):
                outputs = self.inner(prompt, messages=messages, **kwargs)
            if SERVED_FROM_RECORDING.get():  # a resumed run's answer from its own recording: recorded already
                return outputs
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"[:2000]
            self.recorder.add(seq, self.role, request, None, error, public_params(self.inner.kwargs))
            raise
        finally:
            SERVED_FROM_RECORDING.reset(served)
        response = {"outputs": jsonable(outputs), "usage": capture.usage}
        self.recorder.add(seq, self.role, request, response, None, public_params(self.inner.kwargs))
        return outputs

    def copy(self, **kwargs: Any) -> RecordingLM:
        return RecordingLM(self.inner.copy(**kwargs), self.recorder, self.role)


def recorder_for(
    sink: Any, *, enabled: bool, max_bytes: int, extra_secrets: Iterable[str] = (), first_seq: int = 1
) -> LMRecorder | None:
    """The turn's recorder when the sink persists recordings and recording is on; else None."""
    if not enabled or not isinstance(sink, RecordingSink):
        return None
    secrets = {s for s in extra_secrets if len(s) >= MIN_SECRET_CHARS}
    return LMRecorder(sink.record_lm, max_bytes, secrets=secrets, first_seq=first_seq)
