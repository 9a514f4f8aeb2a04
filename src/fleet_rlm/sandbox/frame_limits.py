"""What one frame from a worker may decode to, checked over its bytes before anything is built from them.

Everything a worker sends is written by (or through) guest code: a cell can write forged frames to its protocol
fd. JSON decodes to far more memory than it takes on the wire (`[[],[],...]` is 3 bytes per list, ~80 bytes
decoded: ~25x), a deep nesting raises `RecursionError` in the decoder, and invalid UTF-8 or a huge length are
one write away. So a header is measured first, with C-speed byte operations only (no recursion, no objects per
value): the number of JSON values it holds, how deep it nests, and an upper bound of what it decodes to
(`DecodedHeader.cost`). Over a limit, or failing to decode for *any* reason, it is a `FrameError`: the host
ends that sandbox only. The per-cell and per-second budgets of the same limits are applied by the session
(`session.py`) and the transports' inflow (`inflow.py`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from fleet_rlm.sandbox.protocol import FrameError

MIB = 1024 * 1024


@dataclass(frozen=True)
class FrameLimits:
    """Bounds of what a worker may send. The defaults leave every legitimate frame room (the largest are a
    cell's `done` with a SUBMIT value, and `llm_query` prompts) and keep a flood of forged ones flat."""

    max_header: int = 32 * MIB
    """Bytes of one JSON header (a `done` carrying a large SUBMIT value; a long `llm_query` prompt)."""
    max_depth: int = 64
    """Nesting of objects and arrays in one header."""
    max_values: int = 500_000
    """JSON values (strings, numbers, containers, object keys) in one header."""
    max_decoded: int = 96 * MIB
    """Upper bound of the memory one header decodes to (see `decoded_bound`)."""
    cell_frames: int = 10_000
    """Frames one cell may send (each guest tool call is one); past it the sandbox is reset."""
    cell_decoded: int = 512 * MIB
    """Decoded bytes (the sum of the frames' bounds) one cell may send."""
    frames_per_second: int = 2_000
    """Sustained rate of frames the host reads from one worker; faster writers wait (backpressure)."""
    decoded_per_second: int = 64 * MIB
    """Sustained decoded bytes per second the host reads from one worker; faster writers wait."""
    held_frames: int = 256
    """Frames read from one worker and not yet handled (queued, or a host call still running)."""
    held_decoded: int = 48 * MIB
    """Decoded bytes of those frames; the reader stops reading past it (one frame is always let in)."""


DEFAULT_LIMITS = FrameLimits()

BYTES_PER_VALUE = 80
"""What one JSON value costs at most once decoded, beyond its characters: a container (56-64 bytes plus the GC
header), a float or int (24-32), a dict entry or list slot (8-40), a string's header (49)."""

_STRING = re.compile(rb'"[^"]*"?')  # over bytes whose escaped quotes and backslashes were removed first
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_PAIR = re.compile(rb"\[\]|\{\}")
_ASTRAL = re.compile(rb"[\xf0-\xf4]|\\u[dD][89abAB]")  # a 4-byte UTF-8 lead, or an escaped surrogate
_WIDE = re.compile(rb"[\xc4-\xef]|\\u(?!00)")  # a code point past U+00FF, raw or escaped


@dataclass(frozen=True)
class DecodedHeader:
    header: dict[str, Any]
    cost: int
    """Upper bound of the decoded header's memory in bytes: what the host holds while the frame is handled."""


def decode_header(raw: bytes | bytearray, limits: FrameLimits = DEFAULT_LIMITS) -> DecodedHeader:
    """The JSON object of a frame header, within `limits`; a `FrameError` for anything else.

    Never raises anything but `FrameError` (a `RecursionError`, `MemoryError` or `UnicodeError` included)."""
    try:
        cost = measure(raw, limits)
        text = bytes(raw).decode("utf-8")
        header = json.loads(text)
    except FrameError:
        raise
    except Exception as exc:  # RecursionError, MemoryError, UnicodeDecodeError, ValueError, anything
        raise FrameError(f"frame header is not valid JSON ({type(exc).__name__})") from exc
    if not isinstance(header, dict) or not isinstance(header.get("t"), str):
        raise FrameError("frame header must be a JSON object with a string 't'")
    return DecodedHeader(header, cost)


def measure(raw: bytes | bytearray, limits: FrameLimits = DEFAULT_LIMITS) -> int:
    """The decoded-size bound of a header's bytes, after checking its size, value count and depth.

    Strings are found the way the JSON scanner finds them (escaped backslashes, then escaped quotes, dropped
    first), so brackets and commas inside strings count for nothing. Each step is a C-speed pass over the bytes.
    """
    if len(raw) > limits.max_header:
        raise FrameError(f"frame header of {len(raw)} bytes exceeds {limits.max_header}")
    data = bytes(raw)
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    if data.count(b'"') // 2 > limits.max_values:  # each string is a value: this bounds the next step's work
        raise FrameError(f"frame header holds more than {limits.max_values} JSON values")
    structure = _STRING.sub(b"0", data)
    del data
    brackets = structure.translate(None, _NOT_BRACKETS)
    # each value but a container's first follows a comma; keys follow colons; a container is a value itself
    opens = brackets.count(b"[") + brackets.count(b"{")
    values = 1 + structure.count(b",") + structure.count(b":") + 2 * opens
    if values > limits.max_values:
        raise FrameError(f"frame header holds more than {limits.max_values} JSON values")
    for _ in range(limits.max_depth):
        if not brackets:
            break
        brackets = _PAIR.sub(b"", brackets)
    if brackets:
        raise FrameError(f"frame header nests deeper than {limits.max_depth} (or its brackets do not match)")
    bound = decoded_bound(raw, values)
    if bound > limits.max_decoded:
        raise FrameError(f"frame header would decode to more than {limits.max_decoded // MIB} MiB")
    return bound


def decoded_bound(raw: bytes | bytearray, values: int) -> int:
    """Memory a header of these bytes and `values` JSON values decodes to, at most: its characters at the widest
    width CPython may store them in (1, 2 or 4 bytes), plus `BYTES_PER_VALUE` per value."""
    width = 4 if _ASTRAL.search(raw) else 2 if _WIDE.search(raw) else 1
    return width * len(raw) + BYTES_PER_VALUE * values
