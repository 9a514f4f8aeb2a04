"""Framing of the worker protocol, shared by every transport.

A frame is `>II` (header length, body length), a UTF-8 JSON object header, then raw body bytes. The header
says what the frame means; the body carries bulk data (large context strings) as raw UTF-8 without JSON
escaping, encoded a chunk at a time while it is written (`Body`), so a 40M-character input costs no
escape/parse round and no second copy on the host. `worker.py` carries its own copy of
these few lines because it must run with the standard library only.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

PREFIX = struct.Struct(">II")
# Characters of a str body part encoded at a time: a pipe buffer's worth (64 KiB), so the per-chunk cost
# vanishes in the write that waits for the worker anyway, and the transient encoding is noise.
ENCODE_CHUNK_CHARS = 1 << 16
PROTOCOL_VERSION = 1
# Frames coming *from* a worker are untrusted: `frame_limits.py` bounds and decodes their headers. A worker
# never sends a body, so one from a worker is a protocol error.
MAX_BODY_FROM_WORKER = 0


class FrameError(Exception):
    """A frame violated the protocol (bad length, bad JSON, not an object). The peer is not trusted again."""


@dataclass
class Frame:
    header: dict[str, Any]
    body: bytes = field(default=b"", repr=False)
    cost: int = 0
    """Upper bound of the memory the decoded header holds (frame_limits.py); 0 for frames the host made."""
    release: Callable[[], None] | None = field(default=None, repr=False, compare=False)
    """Set by the transport that read the frame: called once by `done()`."""

    @property
    def kind(self) -> str:
        value = self.header.get("t")
        return value if isinstance(value, str) else ""

    def done(self) -> None:
        """Its consumer no longer holds the frame, so the transport may read more (inflow.py); idempotent."""
        release, self.release = self.release, None
        if release is not None:
            release()


def utf8_size(text: str) -> int:
    """Bytes of `text` in UTF-8 (surrogatepass), without holding its whole encoding.

    Non-ASCII text costs one encoding pass, a chunk at a time: the price of never holding the encoding whole."""
    if text.isascii():  # O(1) in CPython: a flag on the string
        return len(text)
    return sum(len(chunk) for chunk in _encode_chunks(text))


def _encode_chunks(text: str) -> Iterator[bytes]:
    # Slicing never splits a code point (a str holds code points), so the chunks join to the whole encoding.
    for start in range(0, len(text), ENCODE_CHUNK_CHARS):
        yield text[start : start + ENCODE_CHUNK_CHARS].encode("utf-8", "surrogatepass")


class Body:
    """A frame body as parts: bytes written as they are, a str UTF-8-encoded a chunk at a time while it is written.

    A 40M-character context sent to a worker then exists once on the host (the caller's string), not twice
    (the string and its whole encoding) while it travels.
    """

    __slots__ = ("parts", "size")

    def __init__(self, parts: Iterable[bytes | str] = (), size: int | None = None) -> None:
        """`size`: the parts' encoded length when the caller already knows it (it costs a pass over non-ASCII text)."""
        self.parts = tuple(parts)
        if size is None:
            size = sum(len(part) if isinstance(part, bytes) else utf8_size(part) for part in self.parts)
        self.size = size

    @classmethod
    def of(cls, body: bytes | Body) -> Body:
        return body if isinstance(body, Body) else cls((body,) if body else ())

    def __len__(self) -> int:
        return self.size

    def chunks(self) -> Iterator[bytes]:
        for part in self.parts:
            if isinstance(part, bytes):
                yield part
            else:
                yield from _encode_chunks(part)

    def to_bytes(self) -> bytes:
        """The whole body at once, for transports that need it in one piece."""
        return b"".join(self.chunks())


def encode_head(header: dict[str, Any], body_len: int) -> bytes:
    """Length prefix + JSON header; the body follows separately so large bodies are never copied."""
    raw = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return PREFIX.pack(len(raw), body_len) + raw


def encode_frame(header: dict[str, Any], body: bytes | Body = b"") -> bytes:
    """The whole frame in one piece, for channels that cannot take it in parts."""
    raw = Body.of(body).to_bytes()
    return encode_head(header, len(raw)) + raw


def decode_prefix(prefix: bytes, max_header: int, max_body: int) -> tuple[int, int]:
    header_len, body_len = PREFIX.unpack(prefix)
    if header_len == 0 or header_len > max_header:
        raise FrameError(f"frame header length {header_len} outside 1..{max_header}")
    if body_len > max_body:
        raise FrameError(f"frame body length {body_len} exceeds {max_body}")
    return header_len, body_len
