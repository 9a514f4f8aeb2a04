"""The `mcp` SDK's stdio client transport with a bounded reader: each line (one JSON-RPC message) is metered as it
arrives (`mcp_limits.ShapeMeter`) and parsed only when it stayed within the limits.

The SDK's own `stdio_client` joins stdout chunks into one string until a newline, however long, then parses it.
This is that transport (same process start, environment and shutdown sequence: the SDK's helpers) with another
reader: a line is refused as soon as it goes over a limit, the rest of it dropped as it streams (its first bytes
are kept to find its id), and the request it answers gets, in its place, a JSON-RPC error `mcp_result_too_large`;
when those bytes name no request in flight, every request in flight gets it (the server broke the protocol;
only its own calls fail).
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
import anyio.lowlevel
import mcp_types as types
from mcp.client.stdio import (
    StdioServerParameters,
    _aclose_all,
    _create_platform_compatible_process,
    _drain_stdout,
    _get_executable_command,
    _stop_server_process,
    get_default_environment,
)
from mcp.shared.message import SessionMessage

from fleet_rlm.runtime.mcp_limits import TOO_LARGE, ResultLimits, ResultTooLarge, ShapeMeter

logger = logging.getLogger(__name__)

HEAD_BYTES = 4096  # what is kept of a refused line, to find the id of the request it answers
WRITER_FLUSH_S = 0.5
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")')


def refusal(request_id: Any, exc: ResultTooLarge) -> SessionMessage:
    """The JSON-RPC error that answers `request_id` in place of a refused message."""
    error = types.ErrorData(code=types.INTERNAL_ERROR, message=str(exc), data={"code": TOO_LARGE})
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def answered_ids(head: bytes, in_flight: set[Any]) -> list[Any]:
    """The request a refused message answered (its `"id"` among its first bytes), else all in flight."""
    for match in _ID.finditer(head):
        raw = match.group(1)
        request_id: Any = raw[1:-1].decode("utf-8", "replace") if raw.startswith(b'"') else int(raw)
        if request_id in in_flight:
            return [request_id]
    return sorted(in_flight, key=str)


Line = tuple[bytes | ResultTooLarge, bytes]
"""A complete line's bytes, or the refusal of a line (as soon as it goes over a limit) with its first bytes."""


class LineReader:
    """Splits stdout into lines, metering each as it arrives; a line over a limit is refused at once and the
    rest of it dropped as it comes."""

    def __init__(self, limits: ResultLimits) -> None:
        self.meter = ShapeMeter(limits)
        self.line = bytearray()
        self.dropping = False

    def feed(self, chunk: bytes) -> list[Line]:
        """What `chunk` completes: lines (with what came before) and refusals."""
        done: list[Line] = []
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            refused = self._add(chunk[start : len(chunk) if newline < 0 else newline])
            if refused is not None:
                done.append(refused)
            if newline < 0:
                return done
            if not self.dropping:
                done.append((bytes(self.line), b""))
            self.meter.reset()
            self.line, self.dropping = bytearray(), False
            start = newline + 1

    def _add(self, piece: bytes) -> Line | None:
        if self.dropping or not piece:
            return None
        try:
            self.meter.feed(piece)
        except ResultTooLarge as exc:
            head = bytes(self.line[:HEAD_BYTES]) + piece[: max(0, HEAD_BYTES - len(self.line))]
            self.line, self.dropping = bytearray(), True
            return exc, head
        self.line += piece
        return None


@asynccontextmanager
async def bounded_stdio_client(
    server: StdioServerParameters, limits: ResultLimits, errlog: TextIO
) -> AsyncGenerator[Any, None]:
    """`mcp.client.stdio.stdio_client` whose reader refuses a message over `limits` before parsing it."""
    command = await _get_executable_command(server.command)
    process = await _create_platform_compatible_process(
        command=command,
        args=server.args,
        env=get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    in_flight: set[Any] = set()
    writer_done = anyio.Event()

    async def deliver(line: bytes | ResultTooLarge, head: bytes) -> None:
        if isinstance(line, ResultTooLarge):
            logger.warning("MCP server %s: %s", server.command, line)
            for request_id in answered_ids(head, in_flight):
                in_flight.discard(request_id)
                await read_writer.send(refusal(request_id, line))
            return
        if not line.strip():
            return
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError as exc:
            await read_writer.send(exc)
            return
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            in_flight.discard(message.id)
        await read_writer.send(SessionMessage(message))

    async def stdout_reader() -> None:
        assert process.stdout is not None
        reader = LineReader(limits)
        try:
            async with read_writer:
                try:
                    async for chunk in process.stdout:
                        for line, head in reader.feed(chunk):
                            await deliver(line, head)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                finally:
                    await _drain_stdout(process)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for session_message in write_reader:
                    message = session_message.message
                    if isinstance(message, types.JSONRPCRequest):
                        in_flight.add(message.id)
                    data = message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode(server.encoding, errors=server.encoding_error_handler))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(WRITER_FLUSH_S):
            await writer_done.wait()
        await _stop_server_process(process)
        await _aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await shutdown()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
