"""The bound on what an MCP server may send us, checked on the bytes before the SDK parses a message.

The `mcp` SDK reads a whole message (a stdio line, an HTTP body or SSE event) and then parses it into Python
objects, so a server answering 200 MB, or 8 MB of `[[],[],...]` (millions of lists), would grow this process
before any code of ours sees the result. The transports (`mcp_stdio`, `mcp_http`) feed every received chunk to
a `ShapeMeter`, which refuses a message, as it streams, once it is larger than `max_bytes`, nests deeper than
`max_depth` or has more than `max_items` values (arrays and objects opened, plus commas: every value but the
first of a container; a value has at most one key, so strings may number twice that, and closing brackets never
more than opened ones). Nothing is buffered here: the meter keeps counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TOO_LARGE = "mcp_result_too_large"
_STRING_BODY = re.compile(rb'(?:[^"\\\n]++|\\.)*+')  # stops at a quote, a newline, or a backslash at the end
_STRING = re.compile(rb'"(?:[^"\\\n]++|\\.)*+"')  # a whole string on one line
_BRACKETS = re.compile(rb"[\[\]{}]")
_OPENING = frozenset(b"[{")
_BACKSLASH, _NEWLINE = ord("\\"), ord("\n")


@dataclass(frozen=True)
class ResultLimits:
    max_bytes: int
    max_depth: int
    max_items: int


class ResultTooLarge(Exception):
    """A message over one of the limits; its text starts with the stable code `mcp_result_too_large`."""

    code = TOO_LARGE

    def __init__(self, what: str) -> None:
        super().__init__(f"{TOO_LARGE}: the MCP server's message {what}; it was refused before parsing")


class ShapeMeter:
    """Counts one message's bytes, nesting and tokens as its chunks arrive; raises `ResultTooLarge` at a limit.

    Strings are skipped whole (their bytes count, their content does not). A newline ends a string (JSON text
    has none inside one), so SSE field lines cannot hide a message's structure inside a pretended string, and
    a closing bracket never takes the depth below 0.
    """

    def __init__(self, limits: ResultLimits) -> None:
        self.limits = limits
        self.reset()

    def reset(self) -> None:
        self.size = self.depth = self.items = self.strings = self.closes = 0
        self.in_string = self.escaped = False

    def feed(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.limits.max_bytes:
            raise ResultTooLarge(f"is larger than {self.limits.max_bytes} bytes (FLEET_MCP_RESULT_MAX_BYTES)")
        pos = 0
        while pos < len(data):
            if self.in_string:
                pos = self._string(data, pos, len(data))
                continue
            # the strings that close before a newline or the chunk's end, dropped at once; the first quote left
            # (if any) opens a string that does not: every later quote before that point is inside it
            data, found = _STRING.subn(b"", data[pos:] if pos else data)
            self.strings += found
            quote = data.find(b'"')
            self._structure(data, 0, len(data) if quote < 0 else quote)
            if quote < 0:
                return
            self.strings += 1
            self._check()
            self.in_string, pos = True, quote + 1

    def _string(self, data: bytes, pos: int, end: int) -> int:
        """Skips string content from `pos`; returns where scanning goes on."""
        if self.escaped:
            self.escaped = False
            if data[pos] != _NEWLINE:
                pos += 1
        match = _STRING_BODY.match(data, pos)
        stop = match.end() if match else pos
        if stop >= end:
            return end
        if data[stop] == _BACKSLASH and stop + 1 >= end:
            self.escaped = True
            return end
        self.in_string = False  # a quote, a newline, or a backslash before a newline
        return stop + 1

    def _structure(self, data: bytes, start: int, stop: int) -> None:
        opens = data.count(b"[", start, stop) + data.count(b"{", start, stop)
        closes = data.count(b"]", start, stop) + data.count(b"}", start, stop)
        self.items += opens + data.count(b",", start, stop)
        self.closes += closes
        self._check()
        if not opens:
            self.depth = max(0, self.depth - closes)
            return
        for match in _BRACKETS.finditer(data, start, stop):  # at most 2 * max_items of them: checked above
            if data[match.start()] in _OPENING:
                self.depth += 1
                if self.depth > self.limits.max_depth:
                    raise ResultTooLarge(
                        f"nests deeper than {self.limits.max_depth} levels (FLEET_MCP_RESULT_MAX_DEPTH)"
                    )
            else:
                self.depth = max(0, self.depth - 1)

    def _check(self) -> None:
        most = self.limits.max_items
        if self.items > most or self.closes > most + 1 or self.strings > 2 * most + 1:
            raise ResultTooLarge(f"has more than {self.limits.max_items} items (FLEET_MCP_RESULT_MAX_ITEMS)")
