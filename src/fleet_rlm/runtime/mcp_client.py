"""A synchronous handle on one MCP server for a turn's worker threads, over the `mcp` SDK's async `Client`.

The SDK is async and its context managers must be entered and left by one task, so each connection gets an
owner task on a private event-loop thread that holds `async with Client(...)` open until `close()`; tool
calls from any worker thread are submitted to that loop and awaited with a deadline. A call that times out is
cancelled (the SDK tells the server), and a turn that stops wakes every waiting call at once.

stdio servers start with the SDK's minimal environment (PATH, HOME, ...) plus their own `env`: the server's
process never sees our LM keys or other secrets. Their stderr goes to `logs/mcp-<name>.log` when a logs dir is
given (a test or operator can read why a server failed), else nowhere.

Both transports meter what the server sends before the SDK parses it (`mcp_limits`: bytes, nesting, tokens;
`mcp_stdio` for stdio, `mcp_http` for HTTP): a message over a limit fails its call with `McpResultTooLarge`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from fleet_rlm.mcp_servers import McpServerSpec
from fleet_rlm.netguard import GuardCodes
from fleet_rlm.netguard.pinned import pin
from fleet_rlm.runtime.mcp_limits import TOO_LARGE, ResultLimits

T = TypeVar("T")
SHUTDOWN_WAIT_S = 5.0


class McpUnavailable(Exception):
    """The server could not be started, reached or initialized in time."""


class McpCallFailed(Exception):
    """A call did not produce a result: timeout, transport failure or a protocol error."""

    code: str | None = None


class McpResultTooLarge(McpCallFailed):
    """The server's answer went over a limit of `mcp_limits` and was refused before parsing."""

    code = TOO_LARGE


class LoopThread:
    """One asyncio loop on a daemon thread, shared by a turn's connections."""

    def __init__(self, name: str = "mcp-client") -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=SHUTDOWN_WAIT_S)
        if not self.thread.is_alive():
            self.loop.close()


def _transport(
    spec: McpServerSpec, logs_dir: Path | None, guard: GuardCodes | None, limits: ResultLimits
) -> tuple[Any, Any]:
    """The SDK transport for `spec` and what it holds open (closed by the caller): the HTTP client, or the file
    a stdio server's stderr goes to. Every message is metered by `limits` before the SDK reads it (`mcp_http`,
    `mcp_stdio`). An HTTP server is reached over a pinned transport: each connection goes to the address just
    resolved, which must be public when `guard` is given (its codes name the refusal), so a name cannot be
    rebound to loopback after the check."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from fleet_rlm.runtime.mcp_http import IDENTITY, MeteredTransport
    from fleet_rlm.runtime.mcp_stdio import bounded_stdio_client
    from mcp import StdioServerParameters

    if spec.url is not None:
        public_only = guard is not None
        transport = pin(httpx2.AsyncHTTPTransport(), guarded=lambda _h, _p: public_only, codes=guard or GuardCodes())
        http = httpx2.AsyncClient(
            headers={**spec.headers, **IDENTITY},
            timeout=httpx2.Timeout(30.0, read=None),
            transport=MeteredTransport(transport, limits),
            trust_env=False,
            follow_redirects=False,
        )
        # the whole body is metered; an SSE event is part of it, so the SDK's own event limit never binds first
        return streamable_http_client(spec.url, http_client=http, max_sse_event_size=limits.max_bytes + 1), http
    assert spec.command is not None
    errlog = _errlog(spec.name, logs_dir)
    params = StdioServerParameters(command=spec.command, args=list(spec.args), env=dict(spec.env))
    return bounded_stdio_client(params, limits, errlog), errlog


def _errlog(name: str, logs_dir: Path | None) -> Any:
    """stderr of a stdio server: `logs/mcp-<name>.log` (host-only logs dir), else the null device."""
    if logs_dir is not None:
        with contextlib.suppress(OSError):
            return open(logs_dir / f"mcp-{name}.log", "a", encoding="utf-8")
    return open(os.devnull, "w", encoding="utf-8")


class McpConnection:
    """One connected server: its tool listing and `call()`; `close()` ends the session (and a stdio process)."""

    def __init__(
        self,
        spec: McpServerSpec,
        runner: LoopThread,
        *,
        limits: ResultLimits,
        logs_dir: Path | None = None,
        guard: GuardCodes | None = None,
    ) -> None:
        """`guard`: an HTTP server's every connection must reach only public addresses (refused with its codes)."""
        self.spec = spec
        self.limits = limits
        self.guard = guard
        self.runner = runner
        self.logs_dir = logs_dir
        self.tools: list[Any] = []
        self._client: Any = None
        self._closing: asyncio.Event | None = None
        self._owner: concurrent.futures.Future[None] | None = None

    def connect(self, timeout_s: float) -> McpConnection:
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._owner = self.runner.submit(self._hold(ready))
        try:
            ready.result(timeout=timeout_s)
        except concurrent.futures.TimeoutError:
            self.close()
            raise McpUnavailable(f"MCP server {self.spec.name!r} did not start within {timeout_s:g}s") from None
        except Exception as exc:
            self.close()
            raise McpUnavailable(f"MCP server {self.spec.name!r} is unavailable: {_reason(exc)}") from None
        return self

    async def _hold(self, ready: concurrent.futures.Future[None]) -> None:
        from mcp import Client

        self._closing = asyncio.Event()
        transport, resource = _transport(self.spec, self.logs_dir, self.guard, self.limits)
        try:
            async with Client(transport, mode="legacy") as client:
                self._client = client
                self.tools = list((await client.list_tools()).tools)
                ready.set_result(None)
                await self._closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else McpUnavailable("cancelled"))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._client = None
            closer = getattr(resource, "aclose", None) or getattr(resource, "close", None)
            with contextlib.suppress(Exception):
                result = closer() if closer else None
                if asyncio.iscoroutine(result):
                    await result

    def call(self, name: str, arguments: dict[str, Any], *, timeout_s: float, stop: Any = None) -> Any:
        """The CallToolResult of `name`; McpCallFailed on timeout or transport failure (McpResultTooLarge for an
        answer over the limits). `stop(cancel)` registers a callback run when the turn stops (it returns an
        unregister function)."""
        client = self._client
        if client is None:
            raise McpCallFailed(f"MCP server {self.spec.name!r} is not connected")
        future = self.runner.submit(client.call_tool(name, arguments, read_timeout_seconds=timeout_s))
        remove: Callable[[], None] = stop(future.cancel) if stop is not None else (lambda: None)
        try:
            return future.result(timeout=timeout_s + 2.0)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise McpCallFailed(f"timed out after {timeout_s:g}s") from None
        except concurrent.futures.CancelledError:
            raise McpCallFailed("cancelled: the turn stopped") from None
        except Exception as exc:
            reason = _reason(exc)
            if TOO_LARGE in reason:
                raise McpResultTooLarge(reason[reason.index(TOO_LARGE) :]) from None
            raise McpCallFailed(
                f"timed out after {timeout_s:g}s" if reason.startswith("timed out") else reason
            ) from None
        finally:
            remove()

    def close(self) -> None:
        closing = self._closing
        if closing is not None and not self.runner.loop.is_closed():
            self.runner.loop.call_soon_threadsafe(closing.set)
        owner = self._owner
        if owner is not None:
            with contextlib.suppress(Exception):
                owner.result(timeout=SHUTDOWN_WAIT_S)
            owner.cancel()


def _reason(exc: BaseException) -> str:
    """One line for an SDK/transport failure (an ExceptionGroup names its first real cause)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    if "timed out" in text.lower() or isinstance(exc, TimeoutError):
        return f"timed out ({text})"
    return f"{type(exc).__name__}: {text}"[:500]
