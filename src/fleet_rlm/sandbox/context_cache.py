"""Context by reference: send each input variable to the worker once, then only when it changes.

`dspy.RLM` passes every input on every `execute`. Re-serializing a 40M-character context per iteration is what
makes naive interpreters slow, so the host remembers what the worker holds:
- strings: (length, hash). CPython caches a str's hash on the object, so an unchanged context costs O(1)
  after the first iteration; a different string with the same content is also recognized.
- other values: the same object (held here so its id cannot be reused) of unchanged length is trusted when
  its encoding was large; small encodings are simply re-encoded and compared. An in-place mutation of a
  large container that keeps its length is therefore not detected (dspy inputs are not mutated in place).
Large values travel in the frame body (raw UTF-8, no JSON escaping; a string is encoded a chunk at a time as
it is written, see `protocol.Body`); small ones inline in the header. The
worker keeps the last values and re-binds them before each cell, matching dspy's "inputs are re-injected"
semantics without re-sending them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pydantic_core import PydanticSerializationError, to_jsonable_python

from fleet_rlm.sandbox.protocol import Body, utf8_size

REVALIDATE_MAX_BYTES = 1024 * 1024


@dataclass
class _Sent:
    value: Any
    length: int
    fingerprint: tuple[Any, ...]
    encoded_size: int


def _length(value: Any) -> int:
    try:
        return len(value)
    except TypeError:
        return -1


def _default(value: Any) -> Any:
    try:
        return to_jsonable_python(value)
    except PydanticSerializationError:
        raise TypeError(f"unsupported value type: {type(value).__name__}") from None


def encode_json(value: Any) -> bytes:
    try:
        return json.dumps(value, default=_default, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError) as exc:
        from dspy.primitives.code_interpreter import CodeInterpreterError  # dspy loads only when it is needed

        raise CodeInterpreterError(f"a variable cannot be sent to the sandbox: {exc}") from exc


class ContextCache:
    """What one worker currently holds. A fresh worker needs a fresh cache (`reset`)."""

    def __init__(self, inline_max_bytes: int = 64 * 1024) -> None:
        self.inline_max_bytes = inline_max_bytes
        self._sent: dict[str, _Sent] = {}

    def reset(self) -> None:
        self._sent.clear()

    def diff(self, variables: dict[str, Any]) -> tuple[dict[str, Any], Body]:
        """Header fields (`vars`, `blobs`, `drop`) and the body carrying the large changed values."""
        inline: dict[str, Any] = {}
        blobs: list[list[Any]] = []
        parts: list[bytes | str] = []
        offset = 0
        for name, value in variables.items():
            sent = self._sent.get(name)
            if isinstance(value, str):
                fingerprint: tuple[Any, ...] = ("str", len(value), hash(value))
                if sent is not None and sent.fingerprint == fingerprint:
                    continue
                size = len(value) if len(value) * 4 <= self.inline_max_bytes else utf8_size(value)
                if size <= self.inline_max_bytes:
                    inline[name] = value
                else:
                    blobs.append([name, offset, offset + size, "str"])
                    parts.append(value)  # encoded while it is written, never whole (protocol.Body)
                    offset += size
                self._sent[name] = _Sent(value, len(value), fingerprint, size)
                continue
            length = _length(value)
            if (
                sent is not None
                and sent.value is value
                and sent.length == length
                and sent.encoded_size > REVALIDATE_MAX_BYTES
            ):
                continue
            raw = encode_json(value)
            fingerprint = ("json", len(raw), hashlib.blake2b(raw, digest_size=16).digest())
            if sent is not None and sent.fingerprint == fingerprint:
                sent.value = value
                continue
            if len(raw) <= self.inline_max_bytes:
                inline[name] = json.loads(raw)
            else:
                blobs.append([name, offset, offset + len(raw), "json"])
                parts.append(raw)
                offset += len(raw)
            self._sent[name] = _Sent(value, length, fingerprint, len(raw))
        dropped = [name for name in self._sent if name not in variables]
        for name in dropped:
            del self._sent[name]
        fields: dict[str, Any] = {}
        if inline:
            fields["vars"] = inline
        if blobs:
            fields["blobs"] = blobs
        if dropped:
            fields["drop"] = dropped
        return fields, Body(parts, offset)
