"""Value types of the fake LM: what a script answers with and what the server recorded.

Kept free of any I/O so scripts, rules, the HTTP server and the CLI's JSON script files all share one
vocabulary. A script item may be a plain string (assistant text), a dict (see ``FakeResponse.from_value``)
or a ``FakeResponse``; everything is normalised with ``to_response``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any


class FakeLMScriptError(ValueError):
    """A script item or script file the fake LM cannot use (stable ``code`` for callers and the CLI)."""

    code = "fake_lm.bad_script"

    def __init__(self, message: str, action: str = "Fix the script item; see FakeResponse.from_value.") -> None:
        super().__init__(f"[{self.code}] {message} {action}")
        self.message = message
        self.action = action


@dataclass(frozen=True, slots=True)
class FakeResponse:
    """One scripted answer.

    ``content`` is the assistant text. ``status`` >= 400 sends an OpenAI-style error body instead (``error``
    is its message; ``retry_after`` adds a ``Retry-After`` header). ``raw`` is sent verbatim as the JSON body
    with ``status`` (even for stream requests). ``hang`` holds the connection open without answering until
    the client gives up, ``hang_s`` passes or the server stops. ``delay_s`` overrides the server's latency.
    """

    content: str = ""
    status: int = 200
    delay_s: float | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    raw: Any = None
    error: str | None = None
    retry_after: float | None = None
    hang: bool = False
    hang_s: float | None = None
    finish_reason: str = "stop"
    usage: Mapping[str, int] | None = None
    chunk_delay_s: float = 0.0
    stream_chunk_chars: int | None = None

    @classmethod
    def text(cls, content: str, **kwargs: Any) -> FakeResponse:
        return cls(content=content, **kwargs)

    @classmethod
    def rate_limited(cls, retry_after: float = 1.0, message: str = "Rate limit reached (fake LM).") -> FakeResponse:
        return cls(status=429, retry_after=retry_after, error=message)

    @classmethod
    def server_error(cls, status: int = 500, message: str = "Internal server error (fake LM).") -> FakeResponse:
        return cls(status=status, error=message)

    @classmethod
    def hanging(cls, hang_s: float | None = None) -> FakeResponse:
        return cls(hang=True, hang_s=hang_s)

    @classmethod
    def from_value(cls, value: Mapping[str, Any]) -> FakeResponse:
        """Build from a dict (JSON script files). Aliases: ``text`` for content, ``delay`` for delay_s,
        ``json`` for raw."""
        aliases = {"text": "content", "delay": "delay_s", "json": "raw"}
        known = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, val in value.items():
            name = aliases.get(key, key)
            if name not in known:
                raise FakeLMScriptError(f"unknown response key {key!r}; known keys: {sorted(known)}.")
            kwargs[name] = val
        if not isinstance(kwargs.get("content", ""), str):
            raise FakeLMScriptError("response 'content' must be a string.")
        try:
            return cls(**kwargs)
        except TypeError as exc:  # pragma: no cover - defensive, keys are pre-checked
            raise FakeLMScriptError(str(exc)) from exc

    @property
    def is_error(self) -> bool:
        return self.status >= 400


ResponseLike = str | FakeResponse | Mapping[str, Any]


def to_response(value: ResponseLike) -> FakeResponse:
    """Normalise a script item to a ``FakeResponse``."""
    if isinstance(value, FakeResponse):
        return value
    if isinstance(value, str):
        return FakeResponse(content=value)
    if isinstance(value, Mapping):
        return FakeResponse.from_value(value)
    raise FakeLMScriptError(f"cannot use {type(value).__name__} as a response; use str, dict or FakeResponse.")


def estimate_tokens(text: str) -> int:
    """Rough token count: about four characters per token, the usual rule of thumb for English text."""
    return math.ceil(len(text) / 4) if text else 0


def content_text(content: Any) -> str:
    """Text of an OpenAI message ``content``: a string or a list of parts (only text parts count)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return json.dumps(content, default=str)


@dataclass(slots=True)
class RecordedRequest:
    """One HTTP request the fake LM received (every endpoint except the ``/_fake`` control API)."""

    index: int
    method: str
    path: str
    body: Any
    headers: dict[str, str]
    timestamp: float
    response: FakeResponse | None = None  # what the server chose to answer; set after resolution

    @property
    def json(self) -> dict[str, Any]:
        return self.body if isinstance(self.body, dict) else {}

    @property
    def model(self) -> str | None:
        value = self.json.get("model")
        return value if isinstance(value, str) else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        value = self.json.get("messages")
        return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []

    @property
    def stream(self) -> bool:
        return bool(self.json.get("stream", False))

    @property
    def include_usage(self) -> bool:
        options = self.json.get("stream_options")
        return isinstance(options, Mapping) and bool(options.get("include_usage"))

    @property
    def prompt(self) -> str:
        """Text completions' ``prompt`` (joined when a list); empty for chat requests."""
        value = self.json.get("prompt", "")
        return "\n".join(map(str, value)) if isinstance(value, list) else str(value)

    def texts(self, role: str | None = None) -> list[str]:
        return [content_text(m.get("content")) for m in self.messages if role is None or m.get("role") == role]

    @property
    def system_text(self) -> str:
        return "\n".join(self.texts("system"))

    @property
    def last_user_text(self) -> str:
        users = self.texts("user")
        return users[-1] if users else self.prompt

    @property
    def text(self) -> str:
        """All prompt text of the request (every message, or the completion prompt)."""
        return "\n".join(self.texts()) if self.messages else self.prompt

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "method": self.method,
            "path": self.path,
            "body": self.body,
            "timestamp": self.timestamp,
            "model": self.model,
            "stream": self.stream,
            "headers": dict(self.headers),
        }


Rule = Callable[[RecordedRequest], ResponseLike | Awaitable[ResponseLike | None] | None]
"""A rule sees each request first; it returns a response, or None to let the queue/default answer."""
