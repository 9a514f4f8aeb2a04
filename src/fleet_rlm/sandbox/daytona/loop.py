"""A private asyncio event loop on a daemon thread: how the synchronous interpreter drives the async SDK.

`dspy.RLM` calls `execute()` synchronously (often from a worker thread of an outer event loop), while log
streaming in the `daytona` SDK is async-only. One loop per backend, owned here, runs every SDK coroutine and
every log follower; sync callers block on `run()`. The SDK's aiohttp session is bound to this loop, so all SDK
objects must only be used through it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopClosed(RuntimeError):
    """The backend's loop was shut down; nothing more can run on it."""


class LoopThread:
    def __init__(self, name: str = "daytona-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    @property
    def closed(self) -> bool:
        return self._closed

    def in_loop(self) -> bool:
        return threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        if self._closed:
            coro.close()
            raise LoopClosed("the Daytona backend is shut down")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run a coroutine on the loop and wait for it; on timeout it is cancelled and TimeoutError raised."""
        if self.in_loop():
            coro.close()
            raise RuntimeError("LoopThread.run() called from its own loop (would deadlock)")
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"Daytona operation did not finish within {timeout:g} s") from None

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        if self._closed:
            raise LoopClosed("the Daytona backend is shut down")
        self.loop.call_soon_threadsafe(fn, *args)

    def close(self, timeout: float = 5.0) -> None:
        """Cancel what still runs (log followers), stop the loop and join the thread."""
        if self._closed:
            return
        self._closed = True

        async def _cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if self._thread.is_alive() and not self.in_loop():
            try:
                asyncio.run_coroutine_threadsafe(_cancel_all(), self.loop).result(timeout)
            except (concurrent.futures.TimeoutError, RuntimeError):
                pass
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout)
        if not self._thread.is_alive():
            self.loop.close()
