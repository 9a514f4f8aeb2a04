"""The fake LM's brain: scripted responses, rules, default, latency and the request log.

Thread-safe: tests push responses and read the log from their own threads while the server's event loop
records and resolves requests. Resolution order for each request: the rules (first non-None wins), then the
queue (FIFO), then the default. Rules run on the server's event loop, so keep them fast (or make them async).
"""

from __future__ import annotations

import inspect
import json
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fleet_rlm.testing.fake_lm_rules import rules_from_spec
from fleet_rlm.testing.fake_lm_types import (
    FakeLMScriptError,
    FakeResponse,
    RecordedRequest,
    ResponseLike,
    Rule,
    to_response,
)

DEFAULT_TEXT = "fake-lm: no scripted response left. Push one with FakeLMServer.push(...), add a rule, or set default=."


class FakeLMScript:
    """Responses to give and requests received; shared by the HTTP server and the test code."""

    def __init__(
        self,
        responses: Iterable[ResponseLike] = (),
        *,
        rules: Sequence[Rule] = (),
        default: ResponseLike = DEFAULT_TEXT,
        latency_s: float = 0.0,
        max_recorded: int | None = None,
    ) -> None:
        """``max_recorded`` keeps only the newest N requests in the log (long benchmarks); None keeps all."""
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._queue: deque[FakeResponse] = deque(to_response(r) for r in responses)
        self._rules: list[Rule] = list(rules)
        self._default = to_response(default)
        self._latency_s = float(latency_s)
        self._log: deque[RecordedRequest] = deque(maxlen=max_recorded)
        self._count = 0  # requests ever received: the next RecordedRequest.index
        self._seen = 0  # requests received since the last clear/reset (wait_for_requests counts these)

    # -- scripting -------------------------------------------------------------------------------------
    def push(self, *responses: ResponseLike) -> None:
        """Append responses to the queue (served FIFO after the rules pass)."""
        items = [to_response(r) for r in responses]
        with self._lock:
            self._queue.extend(items)

    def add_rule(self, rule: Rule) -> None:
        with self._lock:
            self._rules.append(rule)

    def set_rules(self, rules: Sequence[Rule]) -> None:
        with self._lock:
            self._rules = list(rules)

    @property
    def default(self) -> FakeResponse:
        return self._default

    @default.setter
    def default(self, value: ResponseLike) -> None:
        self._default = to_response(value)

    @property
    def latency_s(self) -> float:
        return self._latency_s

    @latency_s.setter
    def latency_s(self, value: float) -> None:
        self._latency_s = float(value)

    @property
    def pending(self) -> int:
        """How many queued responses are still unserved."""
        with self._lock:
            return len(self._queue)

    def reset(self) -> None:
        """Drop queued responses, rules and the request log (the default and latency stay)."""
        with self._lock:
            self._queue.clear()
            self._rules.clear()
            self._log.clear()
            self._seen = 0

    # -- serving ---------------------------------------------------------------------------------------
    def record(self, method: str, path: str, body: Any, headers: Mapping[str, str]) -> RecordedRequest:
        with self._lock:
            request = RecordedRequest(
                index=self._count,
                method=method,
                path=path,
                body=body,
                headers=dict(headers),
                timestamp=time.time(),
            )
            self._count += 1
            self._seen += 1
            self._log.append(request)
            self._arrived.notify_all()
        return request

    async def resolve(self, request: RecordedRequest) -> FakeResponse:
        """Choose the response for ``request``: rules, then queue, then default."""
        with self._lock:
            rules = list(self._rules)
        for rule in rules:
            result: Any = rule(request)
            if inspect.isawaitable(result):
                result = await result
            if result is not None:
                request.response = to_response(result)
                return request.response
        with self._lock:
            response = self._queue.popleft() if self._queue else self._default
        request.response = response
        return response

    # -- inspection ------------------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of recorded requests, oldest first."""
        with self._lock:
            return list(self._log)

    @property
    def last_request(self) -> RecordedRequest | None:
        with self._lock:
            return self._log[-1] if self._log else None

    def clear(self) -> None:
        """Forget recorded requests (the queue and rules stay)."""
        with self._lock:
            self._log.clear()
            self._seen = 0

    def wait_for_requests(self, count: int, timeout_s: float = 10.0) -> list[RecordedRequest]:
        """Block until ``count`` requests arrived since the last clear; raises TimeoutError otherwise."""
        deadline = time.monotonic() + timeout_s
        with self._arrived:
            while self._seen < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"fake LM saw {self._seen} of {count} expected requests")
                self._arrived.wait(remaining)
            return list(self._log)


def script_from_spec(spec: Any) -> FakeLMScript:
    """Build a script from JSON data: a list of responses, or an object with ``responses``, ``rules``,
    ``default`` and ``latency_s`` (see ``FakeResponse.from_value`` and ``rules_from_spec``)."""
    if isinstance(spec, list):
        spec = {"responses": spec}
    if not isinstance(spec, dict):
        raise FakeLMScriptError("a script must be a JSON list of responses or an object.")
    unknown = set(spec) - {"responses", "rules", "default", "latency_s", "model"}
    if unknown:
        raise FakeLMScriptError(f"unknown script keys {sorted(unknown)}; use responses/rules/default/latency_s/model.")
    responses = spec.get("responses", [])
    rules = spec.get("rules", [])
    if not isinstance(responses, list) or not isinstance(rules, list):
        raise FakeLMScriptError("'responses' and 'rules' must be lists.")
    return FakeLMScript(
        responses,
        rules=rules_from_spec(rules),
        default=spec.get("default", DEFAULT_TEXT),
        latency_s=float(spec.get("latency_s", 0.0)),
    )


def load_script_file(path: str | Path) -> tuple[FakeLMScript, dict[str, Any]]:
    """Read a JSON script file; returns the script and the raw spec (for options such as ``model``)."""
    try:
        spec = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise FakeLMScriptError(f"cannot read script file {path}: {exc}.", "Pass an existing JSON file.") from exc
    except json.JSONDecodeError as exc:
        raise FakeLMScriptError(f"script file {path} is not valid JSON: {exc}.", "Fix the JSON.") from exc
    return script_from_spec(spec), spec if isinstance(spec, dict) else {"responses": spec}
