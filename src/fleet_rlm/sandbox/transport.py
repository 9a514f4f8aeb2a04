"""Transports carry protocol frames between the host and one worker.

The host-side client (`session.py`) only sees `Transport`: `send_frame`, `recv_frame`, `close`. Locally the
worker's frames travel over two pipes handed to the subprocess; the Daytona backend carries the same frames
over its own channel. `recv_frame` is fed by a reader thread so timeouts never leave a frame half-read.
Frames from a worker are bounded as they are decoded (`frame_limits.py`) and held within `inflow.py`'s limits;
anything wrong with one ends that worker's transport with a `FrameError`, never the host's reader of another.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from typing import Any, Protocol

from fleet_rlm.sandbox.frame_limits import DEFAULT_LIMITS, FrameLimits, decode_header
from fleet_rlm.sandbox.inflow import Inflow
from fleet_rlm.sandbox.protocol import MAX_BODY_FROM_WORKER, PREFIX, Body, Frame, FrameError, decode_prefix, encode_head


class TransportClosed(Exception):
    """The channel to the worker is gone (worker exited, killed, or closed)."""


class Transport(Protocol):
    def send_frame(self, header: dict[str, Any], body: bytes | Body = b"") -> None: ...

    def recv_frame(self, timeout: float | None = None) -> Frame:
        """Next frame; raises TimeoutError, TransportClosed, or FrameError (peer misbehaved)."""
        ...

    def close(self) -> None: ...


def _read_exact(fd: int, size: int, *, at_frame_start: bool = False) -> bytearray | None:
    """Read exactly `size` bytes; None only for a clean EOF between frames."""
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = os.readv(fd, [view[got:]])
        if n == 0:
            if got == 0 and at_frame_start:
                return None
            raise FrameError(f"stream ended inside a frame ({got}/{size} bytes)")
        got += n
    return buf


class PipeTransport:
    """Frames over a pair of file descriptors (the local backend's pipes to the worker subprocess)."""

    def __init__(
        self,
        read_fd: int,
        write_fd: int,
        *,
        limits: FrameLimits = DEFAULT_LIMITS,
    ) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._limits = limits
        self.inflow = Inflow(limits)
        self._inbox: queue.SimpleQueue[Frame | BaseException] = queue.SimpleQueue()
        self._send_lock = threading.Lock()
        self._closed = False
        self._reader = threading.Thread(target=self._read_loop, name="sandbox-transport", daemon=True)
        self._reader.start()

    def _read_loop(self) -> None:
        try:
            while True:
                prefix = _read_exact(self._read_fd, PREFIX.size, at_frame_start=True)
                if prefix is None:
                    self._inbox.put(TransportClosed("worker closed its channel"))
                    return
                header_len, _ = decode_prefix(bytes(prefix), self._limits.max_header, MAX_BODY_FROM_WORKER)
                decoded = decode_header(_read_exact(self._read_fd, header_len) or b"", self._limits)
                if not self.inflow.admit(decoded.cost):  # waits while the host holds too much, or reads too fast
                    return
                self._inbox.put(Frame(decoded.header, cost=decoded.cost, release=self.inflow.release_for(decoded.cost)))
        except FrameError as exc:
            self._inbox.put(exc)
        except OSError as exc:
            self._inbox.put(TransportClosed(f"channel error: {exc}"))
        except BaseException as exc:  # never end without a word: the session must learn this worker is unusable
            self._inbox.put(FrameError(f"the worker's frames could not be read ({type(exc).__name__})"))
        finally:
            with contextlib.suppress(OSError):
                os.close(self._read_fd)

    def send_frame(self, header: dict[str, Any], body: bytes | Body = b"") -> None:
        body = Body.of(body)
        prefix_and_header = encode_head(header, len(body))
        with self._send_lock:
            if self._closed:
                raise TransportClosed("transport is closed")
            try:
                self._write_all(prefix_and_header)
                for chunk in body.chunks():  # a str part is encoded a chunk at a time, never whole
                    self._write_all(chunk)
            except OSError as exc:
                raise TransportClosed(f"cannot write to worker: {exc}") from exc

    def _write_all(self, part: bytes) -> None:
        data = memoryview(part)
        while data:
            data = data[os.write(self._write_fd, data) :]

    def recv_frame(self, timeout: float | None = None) -> Frame:
        return take_frame(self._inbox, timeout)

    def close(self) -> None:
        self.inflow.close()
        with self._send_lock:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(OSError):
                os.close(self._write_fd)


def take_frame(inbox: queue.SimpleQueue[Any], timeout: float | None) -> Frame:
    """The next frame a reader thread queued; an end state (an exception) is sticky for every later call."""
    try:
        item = inbox.get(timeout=timeout)
    except queue.Empty:
        raise TimeoutError("no frame from worker within the timeout") from None
    if isinstance(item, BaseException):
        inbox.put(item)
        raise item
    return item  # type: ignore[no-any-return]
