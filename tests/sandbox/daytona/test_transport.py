"""`LineTransport` reassembly and failure modes, driven by a minimal in-memory process session.

The real Daytona log stream does not promise line-aligned chunks (the fake sends whole lines), so this feeds
frames split at arbitrary byte boundaries, interleaved stderr, and broken lines through the transport.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from fleet_rlm.sandbox.daytona.loop import LoopThread
from fleet_rlm.sandbox.daytona.transport import LineTransport
from fleet_rlm.sandbox.protocol import FrameError, encode_frame
from fleet_rlm.sandbox.transport import TransportClosed
from fleet_rlm.sandbox.worker_lines import LineDecoder, encode_lines


class ScriptedSession:
    """Plays a scripted log (stdout/stderr chunks) and records stdin, like one Daytona session command."""

    def __init__(self, chunks: list[tuple[str, str]]) -> None:
        self.chunks = chunks
        self.stdin: list[str] = []
        self.release = asyncio.Event()

    async def get_session_command_logs_async(
        self, _sid: str, _cid: str, on_stdout: Callable[[str], None], on_stderr: Callable[[str], None]
    ) -> None:
        for stream, text in self.chunks:
            (on_stdout if stream == "out" else on_stderr)(text)
            await asyncio.sleep(0)
        await self.release.wait()

    async def send_session_command_input(self, _sid: str, _cid: str, data: str, request_timeout: float = 0) -> None:
        self.stdin.append(data)


@pytest.fixture
def loop() -> Iterator[LoopThread]:
    thread = LoopThread()
    yield thread
    thread.close()


def _transport(loop: LoopThread, session: ScriptedSession, **kwargs: int) -> LineTransport:
    return LineTransport(loop, session, "s", "c", **kwargs)  # type: ignore[arg-type]


def test_frames_split_at_arbitrary_boundaries(loop: LoopThread) -> None:
    frames = [encode_frame({"t": "ready"}), encode_frame({"t": "done", "id": 1, "output": "x" * 100_000})]
    text = "".join(line + "\n" for frame in frames for line in encode_lines(frame))
    chunks = [("out", text[i : i + 997]) for i in range(0, len(text), 997)]
    chunks.insert(3, ("err", "warning: something\n"))
    session = ScriptedSession(chunks)
    transport = _transport(loop, session)
    assert transport.recv_frame(timeout=5).kind == "ready"
    done = transport.recv_frame(timeout=5)
    assert done.header["output"] == "x" * 100_000
    assert transport.stderr_tail() == "warning: something\n"
    loop.call_soon(session.release.set)
    with pytest.raises(TransportClosed, match="stderr: warning: something"):
        transport.recv_frame(timeout=5)
    assert not transport.alive()


def test_sends_are_ordered_and_split_by_request_size(loop: LoopThread) -> None:
    session = ScriptedSession([])
    transport = _transport(loop, session, max_post_bytes=70_000)
    transport.send_frame({"t": "exec", "id": 1}, b"b" * 200_000)
    transport.send_frame({"t": "reply", "id": 2, "ok": True})
    assert len(session.stdin) >= 3 and all(len(data) <= 70_000 for data in session.stdin)
    decoder, headers = LineDecoder(), []
    for line in "".join(session.stdin).splitlines():
        data = decoder.feed(line)
        if data is not None:
            headers.append(data)
    assert len(headers) == 2 and headers[1] == encode_frame({"t": "reply", "id": 2, "ok": True})
    transport.close()
    with pytest.raises(TransportClosed):
        transport.send_frame({"t": "shutdown"})


def test_a_forged_line_breaks_the_channel(loop: LoopThread) -> None:
    ready = encode_lines(encode_frame({"t": "ready"}))[0]
    session = ScriptedSession([("out", ready + "\nprint from guest code\n")])
    transport = _transport(loop, session)
    assert transport.recv_frame(timeout=5).kind == "ready"
    with pytest.raises(FrameError, match="not a protocol line"):
        transport.recv_frame(timeout=5)
    with pytest.raises(FrameError):  # sticky
        transport.recv_frame(timeout=1)
    transport.close()
