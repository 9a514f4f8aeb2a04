"""`Inflow`: how much of one worker's output the host holds, and how fast it reads it.

A frame read from a worker is *held* from the moment its header is decoded until its consumer calls
`Frame.done()` (the session, once it handled the frame; the host bridge, once a guest call's reply is sent).
The reader of a local worker waits while the held frames are at `FrameLimits.held_frames` or
`held_decoded` bytes (one frame is always let in), and paces itself to `frames_per_second` and
`decoded_per_second`: a guest flooding its protocol fd then fills the pipe and blocks in its own `write`,
instead of growing the host. A reader that cannot wait (Daytona's, on a shared event loop) uses `try_admit`
and ends the sandbox when the host is that far behind.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from fleet_rlm.sandbox.frame_limits import FrameLimits


class Inflow:
    def __init__(self, limits: FrameLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = limits
        self._clock = clock
        self._cond = threading.Condition()
        self._frames = 0
        self._bytes = 0
        self._closed = False
        # token buckets of the per-second budgets, one second deep
        self._frame_tokens = float(limits.frames_per_second)
        self._byte_tokens = float(limits.decoded_per_second)
        self._refilled = clock()

    @property
    def held(self) -> tuple[int, int]:
        """(frames, decoded bytes) read and not yet done."""
        with self._cond:
            return self._frames, self._bytes

    def admit(self, cost: int) -> bool:
        """Wait until a frame of `cost` decoded bytes may be handed on (paced, and room held); False once closed."""
        with self._cond:
            delay = self._spend(cost)
            if delay > 0:
                self._cond.wait_for(lambda: self._closed, timeout=delay)
            self._cond.wait_for(lambda: self._closed or self._room(cost))
            if self._closed:
                return False
            self._hold(cost)
            return True

    def try_admit(self, cost: int) -> bool:
        """Hold a frame if there is room now (no pacing); False when the host is behind by the held limits."""
        with self._cond:
            if self._closed or not self._room(cost):
                return False
            self._hold(cost)
            return True

    def release_for(self, cost: int) -> Callable[[], None]:
        """The `Frame.release` of a frame admitted with `cost`."""
        return lambda: self._release(cost)

    def close(self) -> None:
        """Wake a waiting reader for good (the transport is closing)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _room(self, cost: int) -> bool:
        if self._frames == 0:
            return True
        limits = self._limits
        return self._frames < limits.held_frames and self._bytes + cost <= limits.held_decoded

    def _hold(self, cost: int) -> None:
        self._frames += 1
        self._bytes += cost

    def _release(self, cost: int) -> None:
        with self._cond:
            self._frames -= 1
            self._bytes -= cost
            self._cond.notify_all()

    def _spend(self, cost: int) -> float:
        """Take one frame and `cost` bytes from the buckets; seconds to wait until they are paid for."""
        limits = self._limits
        now = self._clock()
        elapsed, self._refilled = now - self._refilled, now
        self._frame_tokens = min(self._frame_tokens + elapsed * limits.frames_per_second, limits.frames_per_second)
        self._byte_tokens = min(self._byte_tokens + elapsed * limits.decoded_per_second, limits.decoded_per_second)
        self._frame_tokens -= 1
        self._byte_tokens -= cost
        return max(-self._frame_tokens / limits.frames_per_second, -self._byte_tokens / limits.decoded_per_second, 0.0)
