"""The line codec both ends of the Daytona channel use (`sandbox/worker_lines.py`), and the worker over it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fleet_rlm.sandbox.daytona.options import SANDBOX_DIR
from fleet_rlm.sandbox.protocol import encode_frame
from fleet_rlm.sandbox.worker_lines import CHUNK_RAW, LineDecoder, encode_lines, split_frame


def _decode(lines: list[str], decoder: LineDecoder | None = None) -> list[bytes]:
    decoder = decoder or LineDecoder()
    frames = []
    for line in lines:
        data = decoder.feed(line)
        if data is not None:
            frames.append(data)
    return frames


def test_small_and_large_frames_round_trip_as_ascii_lines() -> None:
    small = encode_frame({"t": "call", "args": ["é\n\x01\x02"]})
    large = encode_frame({"t": "exec"}, b"\x00\x01\x02\xff" * CHUNK_RAW)
    lines = encode_lines(small) + encode_lines(large)
    assert all(line.isascii() and "\n" not in line and "\x01" not in line and "\x02" not in line for line in lines)
    assert len(encode_lines(small)) == 1 and len(encode_lines(large)) == 5
    assert _decode(lines) == [small, large]
    header, body = split_frame(large)
    assert json.loads(header) == {"t": "exec"} and body == b"\x00\x01\x02\xff" * CHUNK_RAW


def test_blank_lines_and_carriage_returns_are_ignored() -> None:
    frame = encode_frame({"t": "reply", "id": 1})
    assert _decode(["", "  ", encode_lines(frame)[0] + "\r", ""]) == [frame]


@pytest.mark.parametrize(
    ("line", "message"),
    [("hello from guest code", "not a protocol line"), (".not base64!", "bad base64"), ("~AAAA", None)],
)
def test_malformed_lines_are_rejected(line: str, message: str | None) -> None:
    decoder = LineDecoder(max_bytes=2)
    with pytest.raises(ValueError, match=message or "exceeds 2 bytes"):
        decoder.feed(line)


def test_split_frame_checks_lengths() -> None:
    frame = encode_frame({"t": "done"}, b"body")
    with pytest.raises(ValueError, match="do not match"):
        split_frame(frame + b"x")
    with pytest.raises(ValueError, match="shorter"):
        split_frame(b"abc")


def test_worker_runs_over_stdin_and_stdout_lines(tmp_path: object) -> None:
    """worker_lines.py as the sandbox runs it: frames on stdin/stdout, user prints never on stdout."""
    cell = {"t": "exec", "id": 1, "code": "print('user output')\n6 * 7", "tools": [], "outputs": None}
    stdin = "\n".join(encode_lines(encode_frame(cell)) + encode_lines(encode_frame({"t": "shutdown"}))) + "\n"
    argv = [sys.executable, "-I", "-B", str(SANDBOX_DIR / "worker_lines.py"), "--workspace", str(tmp_path)]
    done = subprocess.run(argv, input=stdin.encode(), capture_output=True, timeout=20, check=True)
    frames = [json.loads(split_frame(f)[0]) for f in _decode(done.stdout.decode("ascii").splitlines())]
    assert [f["t"] for f in frames] == ["ready", "done"]
    assert frames[1]["output"] == "user output\n" and frames[1]["repr"] == "42"
    assert b"user output" not in done.stdout and done.stderr == b""
