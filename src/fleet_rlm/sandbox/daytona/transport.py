"""`LineTransport`: the worker protocol over one Daytona session command (stdin in, streamed log out).

Frames to the worker are base64 lines (`worker_lines.py`) posted as the command's stdin; a single sender task
posts them in order, packing whatever is queued into one request (replies from concurrent guest calls share a
round trip) and splitting very large frames over several requests. Frames from the worker arrive as stdout
lines of the command's log, followed over a WebSocket; chunks are re-split into lines here because the log
stream does not promise line-aligned chunks. Stderr (a crash before the worker could speak) is kept as a
short tail for error messages. Both tasks run on the backend's loop; the host side stays synchronous.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
from typing import Any

from daytona._async.process import AsyncProcess

from fleet_rlm.sandbox.daytona.loop import LoopClosed, LoopThread
from fleet_rlm.sandbox.frame_limits import DEFAULT_LIMITS, FrameLimits, decode_header
from fleet_rlm.sandbox.inflow import Inflow
from fleet_rlm.sandbox.protocol import (
    MAX_BODY_FROM_WORKER,
    PREFIX,
    Body,
    Frame,
    FrameError,
    decode_prefix,
    encode_frame,
)
from fleet_rlm.sandbox.transport import TransportClosed, take_frame
from fleet_rlm.sandbox.worker_lines import LineDecoder, encode_lines, split_frame

STDERR_TAIL_CHARS = 2000
_Outgoing = tuple[list[str], "concurrent.futures.Future[None]"]


class LineTransport:
    def __init__(
        self,
        loop: LoopThread,
        process: AsyncProcess,
        session_id: str,
        command_id: str,
        *,
        max_post_bytes: int = 4 * 1024 * 1024,
        request_timeout_s: float = 60.0,
        limits: FrameLimits = DEFAULT_LIMITS,
    ) -> None:
        self._loop = loop
        self._process = process
        self.session_id = session_id
        self.command_id = command_id
        self._max_post = max_post_bytes
        self._timeout = request_timeout_s
        self._limits = limits
        self._max_frame = PREFIX.size + limits.max_header + MAX_BODY_FROM_WORKER
        self._decoder = LineDecoder(self._max_frame)
        self.inflow = Inflow(limits)
        self._partial = ""
        self._stderr = ""
        self._inbox: queue.SimpleQueue[Frame | BaseException] = queue.SimpleQueue()
        self._outbox: asyncio.Queue[_Outgoing] = asyncio.Queue()
        self._ended = threading.Event()
        self._broken = False
        self._closed = False
        self._follower = loop.submit(self._follow())
        self._sender = loop.submit(self._send_loop())

    # --- frames from the worker (runs on the loop) ---------------------------------------------------------
    async def _follow(self) -> None:
        end: BaseException = TransportClosed("the transport was closed")
        try:
            await self._process.get_session_command_logs_async(
                self.session_id, self.command_id, self._on_stdout, self._on_stderr
            )
            end = TransportClosed(f"the worker's channel closed{self._stderr_hint()}")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            end = TransportClosed(f"the log stream of the worker failed: {exc}")
        finally:
            self._ended.set()
            self._inbox.put(end)

    def _on_stdout(self, text: str) -> None:
        if self._broken:
            return
        self._partial += text
        if "\n" not in text:
            if len(self._partial) > 2 * self._max_frame:
                self._fail(FrameError("the worker sent an over-long line"))
            return
        *lines, self._partial = self._partial.split("\n")
        for line in lines:
            try:
                frame = self._frame_of(line)
            except FrameError as exc:
                self._fail(exc)
                return
            if frame is not None:
                self._inbox.put(frame)

    def _frame_of(self, line: str) -> Frame | None:
        """The frame a line completes, bounded as the local transport's are; a FrameError for anything wrong.

        This runs on the backend's loop, shared by every Daytona sandbox: it cannot wait for the session, so
        a worker the host is `held_frames` behind is ended instead of paced (inflow.py)."""
        try:
            data = self._decoder.feed(line)
            if data is None:
                return None
            decode_prefix(data[: PREFIX.size], self._limits.max_header, MAX_BODY_FROM_WORKER)
            raw_header, _ = split_frame(data)
            del data
            decoded = decode_header(raw_header, self._limits)
        except FrameError:
            raise
        except Exception as exc:  # a bad line, base64, length: anything
            raise FrameError(f"the worker sent a bad frame ({type(exc).__name__}: {exc})") from exc
        if not self.inflow.try_admit(decoded.cost):
            raise FrameError("the worker sent frames faster than the host handles them")
        return Frame(decoded.header, cost=decoded.cost, release=self.inflow.release_for(decoded.cost))

    def _on_stderr(self, text: str) -> None:
        self._stderr = (self._stderr + text)[-STDERR_TAIL_CHARS:]

    def _stderr_hint(self) -> str:
        tail = self._stderr.strip().splitlines()[-3:]
        return f" (stderr: {' | '.join(tail)})" if tail else ""

    def stderr_tail(self) -> str:
        return self._stderr

    def _fail(self, exc: BaseException) -> None:
        self._broken = True
        self._inbox.put(exc)

    # --- frames to the worker ------------------------------------------------------------------------------
    async def _send_loop(self) -> None:
        while True:
            batch = [await self._outbox.get()]
            while not self._outbox.empty():
                batch.append(self._outbox.get_nowait())
            try:
                await self._post([line for lines, _ in batch for line in lines])
            except Exception as exc:
                error = TransportClosed(f"cannot send to the worker: {exc}")
                for _, future in batch:
                    if not future.done():
                        future.set_exception(error)
                self._fail(error)
                continue
            for _, future in batch:
                if not future.done():
                    future.set_result(None)

    async def _post(self, lines: list[str]) -> None:
        chunk: list[str] = []
        size = 0
        for line in lines:
            if chunk and size + len(line) + 1 > self._max_post:
                await self._post_text("\n".join(chunk))
                chunk, size = [], 0
            chunk.append(line)
            size += len(line) + 1
        if chunk:
            await self._post_text("\n".join(chunk))

    async def _post_text(self, text: str) -> None:
        # Newline-terminated; if the daemon appends another one, the worker skips the blank line.
        await self._process.send_session_command_input(
            self.session_id, self.command_id, text + "\n", request_timeout=self._timeout
        )

    def send_frame(self, header: dict[str, Any], body: bytes | Body = b"") -> None:
        if self._closed or self._ended.is_set():
            raise TransportClosed("the worker's channel is closed")
        lines = encode_lines(encode_frame(header, body))  # the line encoding needs the frame in one piece
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        try:
            self._loop.call_soon(self._outbox.put_nowait, (lines, future))
        except (LoopClosed, RuntimeError) as exc:
            raise TransportClosed(f"the Daytona backend is shut down: {exc}") from exc
        try:
            future.result(timeout=self._timeout + 5)
        except concurrent.futures.TimeoutError:
            raise TransportClosed(f"sending to the worker took longer than {self._timeout:g} s") from None

    def recv_frame(self, timeout: float | None = None) -> Frame:
        return take_frame(self._inbox, timeout)

    def alive(self) -> bool:
        return not (self._ended.is_set() or self._closed or self._broken)

    def close(self) -> None:
        self.inflow.close()
        if self._closed:
            return
        self._closed = True
        for task in (self._follower, self._sender):
            task.cancel()
        self._inbox.put(TransportClosed("the transport was closed"))
