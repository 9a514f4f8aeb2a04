"""A DNS rebinding attacker for the egress tests, reaching only loopback.

`Rebinding` is the attacker's name server: its first `public_answers` lookups get PUBLIC, every later one
127.0.0.1, where the victim `Listener` waits. It is installed through the guard's own seam
(`netguard.use_resolver`), which also judges PUBLIC public: PUBLIC is the loopback alias 127.0.0.2, so a
connection to "the public host" stays on this machine (nothing listens there; it is refused). No test
sends a packet to a real public address. The victim never answers: it counts the connections it accepts.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from fleet_rlm import netguard

PUBLIC = "127.0.0.2"
LOOPBACK = "127.0.0.1"


class Rebinding:
    """public first (`public_answers` lookups), loopback after; every lookup recorded."""

    def __init__(self, public_answers: int = 1) -> None:
        self.public_left = public_answers
        self.lookups: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, host: str, port: int) -> tuple[str, ...]:
        with self._lock:
            answer = PUBLIC if self.public_left > 0 else LOOPBACK
            self.public_left -= 1
            self.lookups.append((host, answer))
        return (answer,)

    def answer_public(self, lookups: int) -> None:
        """The next `lookups` lookups get the public answer again (the attacker's TTL-0 timing)."""
        with self._lock:
            self.public_left = lookups

    @contextmanager
    def installed(self) -> Iterator[Rebinding]:
        with netguard.use_resolver(self, also_public=[PUBLIC]):
            yield self


class Listener:
    """The victim on 127.0.0.1: a TCP server that counts accepted connections and closes them."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((LOOPBACK, 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port: int = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted += 1
            conn.close()

    def url(self, scheme: str, path: str = "/") -> str:
        """The victim's URL by the attacker's host name (the system resolves `localhost` to loopback)."""
        return f"{scheme}://localhost:{self.port}{path}"

    def __enter__(self) -> Listener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()
