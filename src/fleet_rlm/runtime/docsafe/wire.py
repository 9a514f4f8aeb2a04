"""The framing between the server and the converter process: a JSON header, then a length-prefixed blob.

One request is `header` (kind, name, limits) + the document bytes; one reply is `header` (ok, info or error,
retire) + the text as UTF-8. The server side uses `send`/`receive` with a deadline on non-blocking pipes; the
worker side uses the blocking `write_frame`/`read_frame`.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any, BinaryIO

_LENGTHS = struct.Struct(">IQ")
READY = b"R"
_SLICE = 1024 * 1024


class Deadline(Exception):
    """The other side did not finish in time."""


class Closed(Exception):
    """The other side closed its end (the process exited)."""


def encode(header: dict[str, Any], blob: bytes) -> bytes:
    head = json.dumps(header).encode("utf-8")
    return _LENGTHS.pack(len(head), len(blob)) + head + blob


def write_frame(out: BinaryIO, header: dict[str, Any], blob: bytes) -> None:
    out.write(encode(header, blob))
    out.flush()


def read_frame(inp: BinaryIO) -> tuple[dict[str, Any], bytes] | None:
    """The next frame, or None at end of input (the server closed the pipe)."""
    lengths = inp.read(_LENGTHS.size)
    if len(lengths) < _LENGTHS.size:
        return None
    head_len, blob_len = _LENGTHS.unpack(lengths)
    header = json.loads(inp.read(head_len))
    blob = inp.read(blob_len)
    if len(blob) < blob_len:
        return None
    return header, blob


def send(fd: int, data: bytes, deadline: float) -> None:
    """Write all of `data` to a non-blocking fd before `deadline` (time.monotonic)."""
    view = memoryview(data)
    while view:
        _wait(fd, deadline, write=True)
        try:
            written = os.write(fd, view[:_SLICE])
        except BlockingIOError:
            continue
        except BrokenPipeError as exc:
            raise Closed from exc
        view = view[written:]


def receive(fd: int, size: int, deadline: float) -> bytes:
    """Exactly `size` bytes from a non-blocking fd before `deadline`."""
    chunks: list[bytes] = []
    left = size
    while left:
        _wait(fd, deadline, write=False)
        try:
            chunk = os.read(fd, min(left, _SLICE))
        except BlockingIOError:
            continue
        if not chunk:
            raise Closed
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive_frame(fd: int, deadline: float) -> tuple[dict[str, Any], bytes]:
    head_len, blob_len = _LENGTHS.unpack(receive(fd, _LENGTHS.size, deadline))
    header = json.loads(receive(fd, head_len, deadline))
    return header, receive(fd, blob_len, deadline)


def _wait(fd: int, deadline: float, *, write: bool) -> None:
    left = deadline - time.monotonic()
    if left <= 0:
        raise Deadline
    ready = select.select([], [fd], [], left) if write else select.select([fd], [], [], left)
    if not (ready[1] if write else ready[0]):
        raise Deadline
