"""A real concurrent "guest" process that keeps swapping a workspace entry between a plain one and a link.

This is what a process forked by an earlier cell can do while the host works on the workspace. The swapper
counts its swaps in a shared file, so a race loop can make sure the swaps really overlapped its attempts.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# argv: mode (file|dir), target, link target, counter file. Every step tolerates the host renaming things aside.
_SCRIPT = r"""
import os, sys, time
mode, target, link_to, counter = sys.argv[1:5]
fd = os.open(counter, os.O_RDWR)
real, link = target + ".swap-real", target + ".swap-link"
content = open(target, "rb").read() if mode == "file" else b""
deadline = time.monotonic() + 120
swaps = 0
while time.monotonic() < deadline:
    try:
        if not os.path.lexists(link):
            os.symlink(link_to, link)
        if mode == "file":
            os.replace(link, target)                      # the name is now a link to the secret
            with open(real, "wb") as handle:
                handle.write(content)
            os.replace(real, target)                      # ... and a regular file again
        else:
            if os.path.isdir(target) and not os.path.islink(target):
                os.rename(target, real)                   # the real directory steps aside
            os.rename(link, target)                       # the name is now a link to the secret directory
            os.rename(target, link)
            if os.path.isdir(real):
                os.rename(real, target)                   # ... and the real directory is back
            else:
                os.makedirs(target, exist_ok=True)
    except OSError:
        pass
    swaps += 1
    if swaps % 8 == 0:
        os.pwrite(fd, swaps.to_bytes(8, "little"), 0)
        time.sleep(0.0005)  # leave the host some CPU on a small machine; still many swaps per host attempt
"""


class Swapper:
    def __init__(self, process: subprocess.Popen[bytes], counter: Path) -> None:
        self.process = process
        self.counter = counter

    def swaps(self) -> int:
        return int.from_bytes(self.counter.read_bytes()[:8] or b"\0", "little")

    def alive(self) -> bool:
        return self.process.poll() is None


@contextmanager
def swapping(mode: str, target: Path, link_to: Path) -> Iterator[Swapper]:
    """Swap `target` (an existing file or directory) with a link to `link_to` until the block ends."""
    counter = target.parent / f".{target.name}.swaps"
    counter.write_bytes(bytes(8))
    process = subprocess.Popen([sys.executable, "-c", _SCRIPT, mode, str(target), str(link_to), str(counter)])
    swapper = Swapper(process, counter)
    try:
        for _ in range(500):  # wait (bounded) until it really swaps
            if swapper.swaps() or not swapper.alive():
                break
            time.sleep(0.01)
        assert swapper.alive() and swapper.swaps() > 0, "the swapper did not start"
        yield swapper
    finally:
        process.kill()
        process.wait(timeout=10)


def race(swapper: Swapper, attempt: object, *, min_attempts: int = 150, min_swaps: int = 150) -> int:
    """Call `attempt()` until both it ran `min_attempts` times and the swapper swapped `min_swaps` times meanwhile.

    Bounded by wall time, not by a count of attempts: on a fast machine the host's attempts can outpace a swapper
    that the scheduler starves, and a count bound then ends the race before the swaps overlapped it."""
    start = swapper.swaps()
    count = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        attempt()  # type: ignore[operator]
        count += 1
        if count >= min_attempts and swapper.swaps() - start >= min_swaps:
            break
    assert swapper.alive(), "the swapper died during the race"
    assert swapper.swaps() - start >= min_swaps, "the swaps did not overlap the host's attempts"
    return count
