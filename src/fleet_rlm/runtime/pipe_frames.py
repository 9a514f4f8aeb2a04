"""Read a turn process's messages in the API's event loop, from a non-blocking pipe, without a reader thread.

The messages are written by `multiprocessing.Connection.send` in the worker (`process_worker.Outbox`): a
4-byte big-endian length (or -1 and an 8-byte length past 2 GiB), then the pickle. A reader thread blocked in
`Connection.recv` cost each batch a hand-off to the event loop (`call_soon_threadsafe`, the loop's wake-up
pipe, the GIL from the loop and back): ~0.8 ms of the API process's CPU a turn of ~12.8 under a burst of turns
(docs/performance.md). Here the loop watches the fd and parses whole frames out of what it reads; a frame split
across reads waits for its rest, so the loop never blocks on a slow writer. The fd is the read end of a pipe of
its own: an event loop may make a watched fd non-blocking (uvloop does), which a pipe the API also writes to
must not be.
"""

from __future__ import annotations

import asyncio
import logging
import os
import struct
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any

logger = logging.getLogger(__name__)

READ_CHUNK = 1 << 16
MAX_READ_PER_WAKE = 1 << 20  # then the loop serves others first; the fd is still readable and comes round again


def split_frames(buffer: bytearray) -> list[bytes]:
    """Remove and return the complete frames at the start of `buffer` (what is left is a frame's beginning)."""
    frames: list[bytes] = []
    pos, end = 0, len(buffer)
    while end - pos >= 4:
        (size,) = struct.unpack_from("!i", buffer, pos)
        head = 4
        if size == -1:
            if end - pos < 12:
                break
            (size,) = struct.unpack_from("!Q", buffer, pos + 4)
            head = 12
        elif size < 0:
            raise ValueError(f"bad frame length {size}")
        if end - pos - head < size:
            break
        frames.append(bytes(buffer[pos + head : pos + head + size]))
        pos += head + size
    del buffer[:pos]
    return frames


class LoopReader:
    """Watches `conn` (a read-only pipe end) in `loop`: each message goes to `on_message` in the loop's thread, and
    `on_end` runs once (in the loop's thread) when the pipe ends or carries something unreadable."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        conn: Connection,
        on_message: Callable[[Any], None],
        on_end: Callable[[], None],
    ) -> None:
        self.loop = loop
        self.conn = conn
        self.fd = conn.fileno()
        self.on_message = on_message
        self.on_end = on_end
        self.buffer = bytearray()
        self.ended = False
        os.set_blocking(self.fd, False)
        loop.call_soon_threadsafe(self._watch)  # callable from any thread; add_reader only from the loop's

    def _watch(self) -> None:
        if not self.ended:
            self.loop.add_reader(self.fd, self._readable)

    def _readable(self) -> None:
        ended = False
        got = 0
        while got < MAX_READ_PER_WAKE:
            try:
                data = os.read(self.fd, READ_CHUNK)
            except BlockingIOError:
                break
            except OSError:
                ended = True
                break
            if not data:
                ended = True
                break
            self.buffer += data
            got += len(data)
        try:
            for frame in split_frames(self.buffer):
                self.on_message(ForkingPickler.loads(frame))
        except Exception:  # an unreadable message: the stream is no longer trustworthy
            logger.exception("a turn process sent an unreadable message")
            ended = True
        if ended:
            self._end()

    def _end(self) -> None:
        if self.ended:
            return
        self.ended = True
        self.loop.remove_reader(self.fd)
        self.conn.close()
        self.on_end()
