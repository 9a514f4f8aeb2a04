"""Worker frames as text lines, for channels that only carry lines of text (Daytona session commands).

A Daytona session command has a stdin that takes text and a log that streams stdout line by line, with
stream-marker bytes the daemon inserts. Each binary frame (`>II` + JSON header + body, as in `worker.py`) is
therefore sent as base64 lines: `~<b64>` for a chunk with more to follow, `.<b64>` for the last chunk. Lines
are ASCII, never contain the daemon's 0x01/0x02 markers, and blank lines are ignored (some daemons append a
newline to every input). Standard library only: the host imports the codec, the sandbox runs this file:

    python3 -I -B worker_lines.py --workspace /workspace --limits as=...   (stdin/stdout carry the lines)

It then runs `worker.py` from the same directory with its normal protocol fds being stdin and stdout; user
output never reaches stdout because the worker moves its channel to hidden fds and captures cells separately.
"""

import base64
import binascii
import os
import struct
import sys
import threading

PREFIX = struct.Struct(">II")
CHUNK_RAW = 48 * 1024  # raw bytes per line: 64 KiB of base64
MORE, LAST = "~", "."
MAX_FRAME_BYTES = 1 << 31


def encode_lines(data):
    """One frame's bytes as base64 lines (no newlines)."""
    view = memoryview(data)
    lines = []
    for start in range(0, max(len(view), 1), CHUNK_RAW):
        chunk = view[start : start + CHUNK_RAW]
        marker = LAST if start + CHUNK_RAW >= len(view) else MORE
        lines.append(marker + base64.b64encode(chunk).decode("ascii"))
    return lines


def split_frame(data):
    """(header bytes, body bytes) of one whole frame; ValueError when the lengths do not add up."""
    if len(data) < PREFIX.size:
        raise ValueError("frame shorter than its length prefix")
    header_len, body_len = PREFIX.unpack_from(data)
    if header_len == 0 or PREFIX.size + header_len + body_len != len(data):
        raise ValueError("frame lengths do not match its size")
    start = PREFIX.size + header_len
    return bytes(data[PREFIX.size : start]), bytes(data[start:])


class LineDecoder:
    """Reassembles frames from lines; `feed` returns a frame's bytes when its last line arrives."""

    def __init__(self, max_bytes=MAX_FRAME_BYTES):
        self.max_bytes = max_bytes
        self.parts = []
        self.size = 0

    @property
    def in_frame(self):
        return bool(self.parts)

    def feed(self, line):
        line = line.strip()
        if not line:
            return None
        marker, payload = line[:1], line[1:]
        if marker not in (MORE, LAST):
            raise ValueError(f"not a protocol line (starts with {line[:12]!r})")
        try:
            chunk = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ValueError(f"bad base64 in protocol line: {exc}") from None
        self.size += len(chunk)
        if self.size > self.max_bytes:
            raise ValueError(f"frame exceeds {self.max_bytes} bytes")
        self.parts.append(chunk)
        if marker == MORE:
            return None
        data = b"".join(self.parts)
        self.parts, self.size = [], 0
        return data


class LineChannel:
    """The worker's channel (same interface as `worker.Channel`) over line-oriented descriptors."""

    def __init__(self, in_fd, out_fd):
        self.reader = open(in_fd, "rb", buffering=1 << 16, closefd=False)  # noqa: SIM115 - lives with the worker
        self.out_fd = out_fd
        self.decoder = LineDecoder()
        self.lock = threading.Lock()
        # the worker's own JSON (worker_json: C `_json`, bound at its import), not the `json` package the guest
        # shares: a cell that rebinds `json.dumps` or `json.JSONEncoder` must not silence the channel
        codec = sys.modules["worker_json"]
        self.dumps, self.loads = codec.dumps, codec.loads

    def send(self, header, body=b""):
        raw = self.dumps(header, compact=True, default=repr).encode("utf-8")
        text = "\n".join(encode_lines(PREFIX.pack(len(raw), len(body)) + raw + body)) + "\n"
        data = memoryview(text.encode("ascii"))
        with self.lock:
            while data:
                data = data[os.write(self.out_fd, data) :]

    def recv(self):
        while True:
            line = self.reader.readline()
            if not line:
                if self.decoder.in_frame:
                    raise EOFError("stream ended inside a frame")
                return None
            data = self.decoder.feed(line.decode("ascii", "replace"))
            if data is not None:
                header, body = split_frame(data)
                return self.loads(header.decode("utf-8")), bytearray(body)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import worker  # the sibling worker.py (uploaded or baked next to this file)

    sys.path.remove(here)
    # Duplicates of stdin/stdout become the protocol fds; the worker then closes and re-points fds 0-2.
    channel_fds = ["--in", str(os.dup(0)), "--out", str(os.dup(1))]
    worker.main([*argv, *channel_fds], channel_type=LineChannel)


if __name__ == "__main__":
    main(sys.argv[1:])
