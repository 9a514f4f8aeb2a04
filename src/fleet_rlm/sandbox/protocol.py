"""Framing of the worker protocol, shared by every transport.

A frame is `>II` (header length, body length), a UTF-8 JSON object header, then raw body bytes. The header
says what the frame means; the body carries bulk data (large context strings) without JSON escaping, so a
40M-character input costs one memcpy instead of an encode/parse round. `worker.py` carries its own copy of
these few lines because it must run with the standard library only.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from typing import Any

PREFIX = struct.Struct(">II")
PROTOCOL_VERSION = 1
# Frames coming *from* a worker are untrusted: cap what the host will buffer.
MAX_HEADER_FROM_WORKER = 32 * 1024 * 1024
MAX_BODY_FROM_WORKER = 64 * 1024 * 1024


class FrameError(Exception):
    """A frame violated the protocol (bad length, bad JSON, not an object). The peer is not trusted again."""


@dataclass
class Frame:
    header: dict[str, Any]
    body: bytes = field(default=b"", repr=False)

    @property
    def kind(self) -> str:
        value = self.header.get("t")
        return value if isinstance(value, str) else ""


def encode_head(header: dict[str, Any], body_len: int) -> bytes:
    """Length prefix + JSON header; the body follows separately so large bodies are never copied."""
    raw = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return PREFIX.pack(len(raw), body_len) + raw


def encode_frame(header: dict[str, Any], body: bytes = b"") -> bytes:
    return encode_head(header, len(body)) + body


def decode_prefix(prefix: bytes, max_header: int, max_body: int) -> tuple[int, int]:
    header_len, body_len = PREFIX.unpack(prefix)
    if header_len == 0 or header_len > max_header:
        raise FrameError(f"frame header length {header_len} outside 1..{max_header}")
    if body_len > max_body:
        raise FrameError(f"frame body length {body_len} exceeds {max_body}")
    return header_len, body_len


def decode_header(raw: bytes) -> dict[str, Any]:
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FrameError(f"frame header is not JSON: {exc}") from exc
    if not isinstance(header, dict) or not isinstance(header.get("t"), str):
        raise FrameError("frame header must be a JSON object with a string 't'")
    return header
