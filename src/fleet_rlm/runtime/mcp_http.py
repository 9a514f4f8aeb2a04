"""An httpx2 transport (the `mcp` SDK's HTTP client) that meters every response body before the SDK reads it.

The SDK reads a JSON response whole (`aread`) and an SSE event whole, then parses it. Under its client, this
transport hands each response's body through a `mcp_limits.ShapeMeter` as it streams: over a limit the body
raises `ResponseRefused`, which the SDK turns into the JSON-RPC error of the request it answered (a JSON body's
read failure, an SSE stream's failure), so the call fails with `mcp_result_too_large` and the session goes on.
A body is counted per response: an SSE stream's bytes and tokens add up over its events.

Decoded size: we ask for `Accept-Encoding: identity` and refuse a compressed body (its size once inflated is not
known before inflating), so the bytes metered are the bytes the SDK parses.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2

from fleet_rlm.runtime.mcp_limits import ResultLimits, ResultTooLarge, ShapeMeter

IDENTITY = {"accept-encoding": "identity"}


class ResponseRefused(httpx2.SSEError, httpx2.StreamError):
    """A body over a limit, or compressed. Both httpx2 kinds, so each SDK path reports it with its text: a JSON
    body's read catches StreamError, an SSE stream's catches SSEError."""

    def __init__(self, message: str) -> None:
        httpx2.StreamError.__init__(self, message)


class MeteredStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, limits: ResultLimits, headers: httpx2.Headers) -> None:
        self.inner = inner
        self.limits = limits
        self.encoding = headers.get("content-encoding", "identity").strip().lower()
        self.declared = headers.get("content-length", "")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.encoding not in ("", "identity"):
            raise ResponseRefused(f"the MCP server sent a {self.encoding}-compressed body; only identity is read")
        meter = ShapeMeter(self.limits)
        try:
            if self.declared.isdigit() and int(self.declared) > self.limits.max_bytes:
                raise ResultTooLarge(f"is larger than {self.limits.max_bytes} bytes (FLEET_MCP_RESULT_MAX_BYTES)")
            async for chunk in self.inner:
                meter.feed(chunk)
                yield chunk
        except ResultTooLarge as exc:
            raise ResponseRefused(str(exc)) from None

    async def aclose(self) -> None:
        await self.inner.aclose()


class MeteredTransport(httpx2.AsyncBaseTransport):
    """`inner`'s responses, each body metered by `limits`."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, limits: ResultLimits) -> None:
        self.inner = inner
        self.limits = limits

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=MeteredStream(response.stream, self.limits, response.headers),
            request=request,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()
