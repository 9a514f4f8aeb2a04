"""Compact JSON text for what the server streams: WebSocket frames and SSE `data:` lines.

orjson, not `json.dumps`: every event of every run is encoded once per follower, and under a burst of turns
the stdlib encoder was ~6% of the API process's CPU (docs/performance.md). The text is what
`json.dumps(value, separators=(",", ":"), ensure_ascii=False)` gives, except that NaN and infinities become
`null` (json.dumps wrote `NaN`, which is not JSON). What orjson refuses (an integer beyond 64 bits, a string
with a lone surrogate) falls back to the stdlib with non-ASCII escaped, so it still encodes as UTF-8.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from starlette.websockets import WebSocket

_OPTIONS = orjson.OPT_NON_STR_KEYS


def json_text(value: Any) -> str:
    try:
        return orjson.dumps(value, option=_OPTIONS).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(value, separators=(",", ":"))


async def send_json_text(websocket: WebSocket, frame: dict[str, Any]) -> None:
    """`websocket.send_json`, encoded as above."""
    await websocket.send_text(json_text(frame))
