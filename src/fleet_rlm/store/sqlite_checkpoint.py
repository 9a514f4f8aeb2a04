"""WAL checkpoints off the event loop, for connections that commit in the loop's thread.

SQLite's auto-checkpoint runs inside the commit that takes the WAL past 1000 pages: that commit copies the WAL
into the database file and syncs it, milliseconds to tens of milliseconds. Our connections commit their inline
transactions in the caller's thread, the event loop's (store/sqlite_driver.py: a hop to aiosqlite's thread
for each commit cost the API ~2 ms of CPU a turn under load, two thread wake-ups and a GIL hand-over), so the
engine turns auto-checkpoint off on them (store/engine.py) and each commit marks its database for the next
round here instead: one daemon thread, at most once a second, opens a connection of its own per marked
database and runs `PRAGMA wal_checkpoint(PASSIVE)`, which waits for no reader or writer. (The WAL file's size
cannot say when: it keeps its largest size while SQLite reuses it from the start.) Other processes on the
same file keep SQLite's default and checkpoint as usual.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
import urllib.parse

log = logging.getLogger(__name__)

CHECKPOINT_EVERY_S = 1.0
"""At most one checkpoint round a second: the WAL holds at most about a second of writes more than SQLite's
own threshold would let it (under a 50-turn burst ~5 MB), and an idle database costs nothing."""


class Checkpointer:
    """Checkpoints, on its own thread, every database committed to since its last round."""

    def __init__(self) -> None:
        self._dirty: dict[str, None] = {}  # databases committed to since the last round, in order
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def after_commit(self, database: str) -> None:
        """Called after each commit on `database` (cheap: the checkpoint waits for the next round)."""
        with self._lock:
            self._dirty[database] = None
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="sqlite-checkpoint", daemon=True)
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            with self._lock:
                self._wake.clear()
                dirty, self._dirty = list(self._dirty), {}
            for database in dirty:
                checkpoint(database)
            time.sleep(CHECKPOINT_EVERY_S)  # commits meanwhile join the next round


def checkpoint(database: str) -> None:
    """A PASSIVE checkpoint of `database` on a connection of its own (what it cannot copy now, a later round
    does). Opened read-write without create: a database removed since (a test's) is not made again."""
    try:
        uri = "file:" + urllib.parse.quote(database) + "?mode=rw"
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=5.0)) as conn:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    except sqlite3.Error as exc:  # the file is gone, or another checkpoint holds it
        log.debug("checkpoint of %s skipped: %s", database, exc)


checkpointer = Checkpointer()
