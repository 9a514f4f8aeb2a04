"""Output plumbing of the sandbox worker: protocol fds moved out of reach, and each cell's fd 1/2 captured.

Standard library only, shipped next to `worker.py` (bound, uploaded or baked with it) and loaded from there.
"""

import _thread
import fcntl
import io
import os
import select
import sys

HIGH_FD = 300


def hide_fd(fd, floor=HIGH_FD):
    """Move a protocol fd to a high close-on-exec number so children and fd 0-2 reuse never see it."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor)
    os.close(fd)
    return high


class Capture:
    """Captures fd 1/2 (and sys.stdout/sys.stderr) of each cell; keeps head + tail only.

    One non-blocking pipe, drain thread and stream pair serve all cells (per cell they cost ~0.5 ms). Reads
    happen under the lock, so at a cell's end the main thread takes the rest itself, with no thread switch.
    Between cells fds 1/2 are /dev/null (stray output is dropped); fds a cell closed are made again."""

    def __init__(self):
        self.lock = _thread.allocate_lock()
        self.fds, self.draining, self.streams = (-1, -1), False, (None, None)
        self.active = False

    def start(self, limit):
        reopen_std_fds()  # a cell may have closed 0-2; the pipe must not land on them
        try:
            for fd in self.fds:
                os.fstat(fd)
            if not self.draining:
                raise OSError("the capture thread ended")
        except OSError:
            self.fds = tuple(hide_fd(fd, HIGH_FD + 10) for fd in os.pipe())
            os.set_blocking(self.fds[0], False)
            self.draining = True
            try:
                _thread.start_new_thread(self._drain, (self.fds[0],))
            except BaseException:
                self.draining = False
                raise
        with self.lock:
            self.head_max, self.tail_max = max(limit // 2, 1), max(limit - max(limit // 2, 1), 1)
            self.head, self.tail, self.total, self.active = bytearray(), bytearray(), 0, True
        flush_std()
        os.dup2(self.fds[1], 1)
        os.dup2(self.fds[1], 2)
        if any(stream is None or stream.closed for stream in self.streams):
            self.streams = (text_stream(1), text_stream(2))
        sys.stdout, sys.stderr = self.streams
        return self

    def _drain(self, read_fd):
        try:
            poller = select.poll()
            poller.register(read_fd, select.POLLIN)
            gone = select.POLLERR | select.POLLNVAL
            while read_fd == self.fds[0] and not any(mask & gone for _, mask in poller.poll()):
                with self.lock:
                    if not self._take(read_fd):
                        return
        finally:
            if read_fd == self.fds[0]:
                self.draining = False

    def _take(self, read_fd):
        """Store what the pipe holds now (caller holds the lock); False once the pipe is gone."""
        while True:
            try:
                chunk = os.read(read_fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            if not self.active:
                continue
            self.total += len(chunk)
            room = self.head_max - len(self.head)
            self.head += chunk[: max(room, 0)]
            self.tail += chunk[max(room, 0) :]
            if len(self.tail) > 2 * self.tail_max:
                del self.tail[: len(self.tail) - self.tail_max]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        flush_std()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.close(devnull)
        with self.lock:  # everything the cell wrote before the dup2 is in the pipe or already stored
            self._take(self.fds[0])
            self.active = False
        return False

    def text(self):
        tail = bytes(self.tail[-self.tail_max :])
        omitted = max(self.total - len(self.head) - len(tail), 0)
        marker = f"\n... [{omitted} bytes of output omitted] ...\n" if omitted else ""
        return self.head.decode("utf-8", "replace") + marker + tail.decode("utf-8", "replace"), omitted


def reopen_std_fds():
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:  # 0..fd-1 are open, so the lowest free descriptor is fd itself
            os.open(os.devnull, os.O_RDWR)


def text_stream(fd):
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", write_through=True)


def flush_std():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
