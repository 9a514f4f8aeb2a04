"""A large string sent to a worker is encoded a chunk at a time: the same bytes, never the whole encoding at once."""

from __future__ import annotations

import os
import threading
import tracemalloc

import pytest

from fleet_rlm.sandbox.context_cache import ContextCache
from fleet_rlm.sandbox.protocol import ENCODE_CHUNK_CHARS, PREFIX, Body, utf8_size
from fleet_rlm.sandbox.transport import PipeTransport

EDGE = ENCODE_CHUNK_CHARS
TEXTS = {
    "ascii": "lorem ipsum " * (EDGE // 5),
    "latin-1": "é" * (EDGE + 3),
    "bmp": "a" * (EDGE - 1) + "€" * 5,
    "astral across a chunk edge": "b" * (EDGE - 1) + "😀" + "c" * EDGE,
    "lone surrogates": "\ud800" + "x" * (EDGE - 2) + "\udfff\ud83d" + "y" * 10,
    "empty": "",
}


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_chunks_join_to_the_whole_encoding(text: str) -> None:
    whole = text.encode("utf-8", "surrogatepass")
    body = Body([b"head", text, b"tail"])
    assert body.to_bytes() == b"head" + whole + b"tail"
    assert len(body) == len(whole) + 8 == utf8_size(text) + 8
    chunks = [chunk for chunk in body.chunks() if chunk not in (b"head", b"tail")]
    if len(text) > EDGE:
        assert len(chunks) > 1 and max(map(len, chunks)) < len(whole)


def test_bytes_and_empty_bodies() -> None:
    assert len(Body.of(b"")) == 0 and list(Body.of(b"").chunks()) == []
    assert Body.of(b"abc").to_bytes() == b"abc"
    body = Body(["é"])
    assert Body.of(body) is body


def _drain(fd: int, received: list[int]) -> None:
    buf = memoryview(bytearray(1 << 16))
    while n := os.readv(fd, [buf]):
        received[0] += n


def test_sending_a_large_context_never_holds_its_encoding() -> None:
    """The host's peak while a 24M-character context is diffed and written is a chunk, not the context."""
    context = "lorem ipsum " * 2_000_000 + "é" * 10
    out_r, out_w = os.pipe()
    in_r, in_w = os.pipe()  # nothing is ever written here: the transport's reader just waits
    received = [0]
    drain = threading.Thread(target=_drain, args=(out_r, received), daemon=True)
    drain.start()
    transport = PipeTransport(in_r, out_w)
    try:
        tracemalloc.start()
        try:
            fields, body = ContextCache().diff({"context": context, "query": "q"})
            transport.send_frame({"t": "exec", **fields}, body)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        size = utf8_size(context)
        assert fields["blobs"] == [["context", 0, size, "str"]] and fields["vars"] == {"query": "q"}
        assert peak < 4 * ENCODE_CHUNK_CHARS + (1 << 20) < size / 4
    finally:
        transport.close()  # closes out_w: the drain sees the end
        drain.join(timeout=10)
        os.close(out_r)
        os.close(in_w)  # the reader sees the end and closes in_r
    assert received[0] > size + PREFIX.size
