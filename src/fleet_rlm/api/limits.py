"""Request size limits, enforced before and while a body streams in (never after buffering it all).

A declared Content-Length over the limit is refused at once with 413 `payload_too_large`; a chunked body is
counted as it arrives and refused the moment it passes the limit. Uploads, both attachments (POST
/api/v1/attachments) and volume files (PUT /api/v1/runtime/volume/file), share one limit, `upload_max_bytes`
(plus multipart overhead here); each upload route enforces the exact file limit itself.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fleet_rlm.config import Settings

REQUEST_MAX_BYTES = 8 * 1024 * 1024
MULTIPART_OVERHEAD_BYTES = 1024 * 1024
UPLOAD_PATHS = frozenset({"/api/v1/attachments", "/api/v1/runtime/volume/file"})


def payload_too_large_body(limit: int, what: str = "request body") -> dict[str, Any]:
    return {
        "error": {
            "code": "payload_too_large",
            "message": f"the {what} is larger than {limit} bytes",
            "action": "send less data; large inputs go in as attachments or volume uploads",
        }
    }


class BodyLimitMiddleware:
    """Pure ASGI, so it sees the body stream without buffering it."""

    def __init__(self, app: ASGIApp, *, settings: Settings) -> None:
        self.app = app
        self.upload_limit = settings.upload_max_bytes + MULTIPART_OVERHEAD_BYTES
        self.request_limit = max(REQUEST_MAX_BYTES, 0)

    def limit_for(self, scope: Scope) -> int:
        return self.upload_limit if scope.get("path") in UPLOAD_PATHS else self.request_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope)
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _reply_413(send, limit)
            return
        seen = 0

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise HTTPException(413, detail=f"the request body is larger than {limit} bytes")
            return message

        await self.app(scope, counting_receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _reply_413(send: Send, limit: int) -> None:
    body = json.dumps(payload_too_large_body(limit)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
