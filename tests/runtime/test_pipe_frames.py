"""A turn process's messages read in the event loop: whole messages, in order, whatever the pipe splits them into,
and one end when the writer is gone or writes something unreadable."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
import threading
from collections.abc import Callable
from multiprocessing.reduction import ForkingPickler
from typing import Any

import pytest
import uvloop

from fleet_rlm.runtime.pipe_frames import LoopReader, split_frames

MESSAGES: list[Any] = [
    [("event", "k", {"n": 1})],
    [("record", "k", "x" * 20_000)],  # written as header, then body (past 16 KiB)
    [("event", "k", "y" * 2_500_000)],  # more than the pipe holds and than one wake reads
    [],
    [("result", "k", None)],
]


def _wire_bytes(messages: list[Any]) -> bytes:
    """What `Connection.send` writes for `messages`, captured from a real pipe."""
    reader, writer = multiprocessing.Pipe(duplex=False)
    chunks: list[bytes] = []
    done = threading.Event()

    def drain() -> None:
        while data := os.read(reader.fileno(), 1 << 16):
            chunks.append(data)
        done.set()

    threading.Thread(target=drain, daemon=True).start()
    for message in messages:
        writer.send(message)
    writer.close()
    done.wait(10)
    reader.close()
    return b"".join(chunks)


def test_split_frames_takes_only_whole_frames_however_the_bytes_arrive() -> None:
    wire = _wire_bytes(MESSAGES)
    rng = random.Random(7)
    buffer, got, pos = bytearray(), [], 0
    while pos < len(wire):
        step = rng.choice([1, 3, 4, 5, 11, 4096, 70_000])
        buffer += wire[pos : pos + step]
        pos += step
        got += [ForkingPickler.loads(frame) for frame in split_frames(buffer)]
    assert got == MESSAGES and not buffer


def test_a_negative_length_is_refused() -> None:
    with pytest.raises(ValueError):
        split_frames(bytearray(b"\xff\xff\xff\xfe" + b"junk"))


@pytest.mark.parametrize("new_loop", [asyncio.new_event_loop, uvloop.new_event_loop], ids=["asyncio", "uvloop"])
def test_the_loop_reads_every_message_in_order_then_the_end(new_loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
    loop = new_loop()
    reader, writer = multiprocessing.Pipe(duplex=False)
    got: list[Any] = []
    threads: list[str] = []
    ended = asyncio.Event()
    ends: list[int] = []

    def on_message(message: Any) -> None:
        got.append(message)
        threads.append(threading.current_thread().name)

    def on_end() -> None:
        ends.append(1)
        ended.set()

    async def main() -> None:
        LoopReader(loop, reader, on_message, on_end)

        def write() -> None:
            for message in MESSAGES:
                writer.send(message)
            writer.close()

        threading.Thread(target=write, daemon=True).start()
        await asyncio.wait_for(ended.wait(), 30)
        await asyncio.sleep(0.05)  # nothing more comes after the end

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert got == MESSAGES
    assert set(threads) == {threading.current_thread().name}  # delivered on the loop's thread
    assert ends == [1] and reader.closed


def test_an_unreadable_message_ends_the_stream(caplog: pytest.LogCaptureFixture) -> None:
    loop = asyncio.new_event_loop()
    reader, writer = multiprocessing.Pipe(duplex=False)
    got: list[Any] = []
    ended = asyncio.Event()

    async def main() -> None:
        LoopReader(loop, reader, got.append, ended.set)
        writer.send_bytes(b"not a pickle")
        writer.send(["never read"])
        await asyncio.wait_for(ended.wait(), 10)

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
        writer.close()
    assert got == [] and reader.closed
    assert "unreadable message" in caplog.text
