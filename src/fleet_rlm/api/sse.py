"""Server-Sent Events framing: `id:` carries the event's seq, so `Last-Event-ID` resumes exactly there."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastapi.responses import StreamingResponse

from fleet_rlm.api.json_text import json_text

KEEPALIVE = b": keep-alive\n\n"


def sse_frame(event: dict[str, Any]) -> bytes:
    data = json_text(event)
    return f"id: {event.get('seq', '')}\nevent: {event.get('type', 'message')}\ndata: {data}\n\n".encode()


def sse_response(events: AsyncIterator[dict[str, Any]], *, headers: dict[str, str] | None = None) -> StreamingResponse:
    async def body() -> AsyncIterator[bytes]:
        yield b": stream open\n\n"
        async for event in events:
            yield sse_frame(event)

    return StreamingResponse(
        body(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **(headers or {})},
    )


def resume_point(after: int | None, last_event_id: str | None) -> int:
    """`?after=` wins; else the standard `Last-Event-ID` header a reconnecting EventSource sends."""
    if after is not None:
        return max(0, after)
    if last_event_id and last_event_id.strip().isdigit():
        return int(last_event_id.strip())
    return 0
