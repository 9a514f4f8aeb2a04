"""A small asyncio HTTP/1.1 server that speaks the OpenAI API on top of a ``FakeLMScript``.

Raw asyncio streams rather than an ASGI stack: benchmarks drive the fake at zero latency, so per-request
overhead must stay well under a millisecond, and error injection (hanging, dropping) needs direct control
of the socket. Supports keep-alive, Content-Length and chunked request bodies, and chunked SSE responses.

Routes: POST /v1/chat/completions, POST /v1/completions, GET /v1/models (also without the /v1 prefix),
GET /health, and a control API for out-of-process tests: GET /_fake/requests, POST /_fake/responses
(a response or a list), POST /_fake/clear, POST /_fake/reset.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from fleet_rlm.testing import fake_lm_openai as wire
from fleet_rlm.testing.fake_lm_script import FakeLMScript
from fleet_rlm.testing.fake_lm_types import FakeLMScriptError, FakeResponse, RecordedRequest

_MAX_HEAD = 1 << 20


@dataclass(slots=True)
class HttpRequest:
    method: str
    path: str
    version: str
    headers: dict[str, str]
    body: bytes

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        return connection != "close" if self.version == "HTTP/1.1" else connection == "keep-alive"


async def read_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> HttpRequest | None:
    """Read one request; None when the client closed the connection between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            key, _, value = line.partition(":")
            headers[key.strip().lower()] = value.strip()
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip(), 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass  # trailers
                break
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
        body = b"".join(parts)
    else:
        length = int(headers.get("content-length", "0") or 0)
        body = await reader.readexactly(length) if length else b""
    return HttpRequest(method.upper(), target.split("?", 1)[0], version.strip(), headers, body)


def _head(status: int, headers: list[tuple[str, str]], keep_alive: bool) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Status"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{k}: {v}" for k, v in headers]
    lines.append(f"connection: {'keep-alive' if keep_alive else 'close'}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class FakeLMHttpServer:
    """Serves one script on one port inside the running event loop (``start``/``close``)."""

    def __init__(self, script: FakeLMScript, *, model: str = "fake-model", stream_chunk_chars: int = 24) -> None:
        self.script = script
        self.model = model
        self.stream_chunk_chars = stream_chunk_chars
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[Any]] = set()
        self.port = 0

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        self._server = await asyncio.start_server(self._serve, host, port, limit=_MAX_HEAD, backlog=2048)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self.port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while True:
                request = await read_request(reader, writer)
                if request is None or not await self._dispatch(request, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()

    async def _send_json(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: Any,
        keep_alive: bool,
        extra: list[tuple[str, str]] | None = None,
    ) -> bool:
        body = json.dumps(payload, separators=(",", ":")).encode()
        headers = [("content-type", "application/json"), ("content-length", str(len(body))), *(extra or [])]
        writer.write(_head(status, headers, keep_alive) + body)
        await writer.drain()
        return keep_alive

    async def _dispatch(self, req: HttpRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        path = req.path[3:] if req.path.startswith("/v1/") else req.path
        keep = req.keep_alive
        if path.startswith("/_fake/") or path == "/health":
            return await self._control(req, path, writer)
        if req.method == "GET" and path == "/models":
            return await self._send_json(writer, 200, wire.models_body([self.model]), keep)
        if req.method != "POST" or path not in ("/chat/completions", "/completions"):
            return await self._send_json(writer, 404, wire.error_body(404, f"No route {req.method} {req.path}"), keep)
        try:
            body = json.loads(req.body or b"{}")
        except (ValueError, UnicodeDecodeError):
            self.script.record(req.method, req.path, req.body.decode("utf-8", "replace"), req.headers)
            return await self._send_json(writer, 400, wire.error_body(400, "Request body is not valid JSON."), keep)
        recorded = self.script.record(req.method, req.path, body, req.headers)
        try:
            response = await self.script.resolve(recorded)
        except Exception as exc:  # a test's rule failed: tell the client, do not kill the connection
            print(f"fake-lm: rule failed: {exc!r}", file=sys.stderr)
            message = f"fake LM rule raised {exc!r}"
            return await self._send_json(writer, 500, wire.error_body(500, message, "fake_lm.rule_failed"), keep)
        delay = response.delay_s if response.delay_s is not None else self.script.latency_s
        if delay > 0:
            await asyncio.sleep(delay)
        if response.hang:
            try:
                await asyncio.wait_for(reader.read(), response.hang_s)
            except TimeoutError:
                pass
            return False
        return await self._answer(recorded, response, path, writer, keep)

    async def _answer(
        self,
        recorded: RecordedRequest,
        response: FakeResponse,
        path: str,
        writer: asyncio.StreamWriter,
        keep: bool,
    ) -> bool:
        extra = list(response.headers.items())
        if response.retry_after is not None:
            extra.append(("retry-after", f"{response.retry_after:g}"))
            extra.append(("retry-after-ms", str(round(response.retry_after * 1000))))
        if response.raw is not None:
            return await self._send_json(writer, response.status, response.raw, keep, extra)
        if response.is_error:
            message = response.error or f"Fake LM error {response.status}."
            return await self._send_json(
                writer, response.status, wire.error_body(response.status, message), keep, extra
            )
        chat = path == "/chat/completions"
        if not recorded.stream:
            builder = wire.chat_completion if chat else wire.text_completion
            return await self._send_json(writer, 200, builder(recorded, response, self.model), keep, extra)
        chunk_chars = response.stream_chunk_chars or self.stream_chunk_chars
        payloads = (wire.chat_chunks if chat else wire.text_chunks)(recorded, response, self.model, chunk_chars)
        headers = [
            ("content-type", "text/event-stream; charset=utf-8"),
            ("cache-control", "no-cache"),
            ("transfer-encoding", "chunked"),
            *extra,
        ]
        events = [wire.sse_event(p) for p in payloads] + [wire.sse_event("[DONE]")]
        if response.chunk_delay_s <= 0:
            writer.write(_head(200, headers, keep) + b"".join(_chunk(e) for e in events) + b"0\r\n\r\n")
        else:
            writer.write(_head(200, headers, keep))
            for event in events:
                writer.write(_chunk(event))
                await writer.drain()
                await asyncio.sleep(response.chunk_delay_s)
            writer.write(b"0\r\n\r\n")
        await writer.drain()
        return keep

    async def _control(self, req: HttpRequest, path: str, writer: asyncio.StreamWriter) -> bool:
        keep = req.keep_alive
        script = self.script
        if path == "/health":
            return await self._send_json(writer, 200, {"status": "ok", "model": self.model}, keep)
        if req.method == "GET" and path == "/_fake/requests":
            return await self._send_json(writer, 200, {"requests": [r.to_dict() for r in script.requests]}, keep)
        if req.method == "POST" and path == "/_fake/responses":
            try:
                data = json.loads(req.body or b"[]")
                script.push(*(data if isinstance(data, list) else [data]))
            except (ValueError, FakeLMScriptError) as exc:
                return await self._send_json(writer, 400, wire.error_body(400, str(exc), "fake_lm.bad_script"), keep)
            return await self._send_json(writer, 200, {"pending": script.pending}, keep)
        if req.method == "POST" and path in ("/_fake/clear", "/_fake/reset"):
            script.clear() if path == "/_fake/clear" else script.reset()
            return await self._send_json(writer, 200, {"pending": script.pending}, keep)
        return await self._send_json(writer, 404, wire.error_body(404, f"No route {req.method} {req.path}"), keep)
