"""Client frames of `/api/v1/ws/execution`, parsed strictly: a bad frame gets an error frame, never a closed socket."""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fleet_rlm.services.turns.inputs import MessageFrame

MAX_FRAME_BYTES = 2 * 1024 * 1024
MAX_FRAME_DEPTH = 32
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class CancelFrame(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["cancel"]
    run_id: str = Field(min_length=1, max_length=64)


class CommandFrame(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["command"]
    command: str = Field(min_length=1, max_length=64)
    args: dict[str, Any] = Field(default_factory=dict)


class FrameError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


FRAME_TYPES: dict[str, type[BaseModel]] = {"message": MessageFrame, "cancel": CancelFrame, "command": CommandFrame}


def nesting_within(text: str, limit: int = MAX_FRAME_DEPTH) -> bool:
    """Whether `text`'s arrays/objects nest at most `limit` deep (unbalanced text counts as deep when long).

    Checked before `json.loads`, whose recursion a frame nested 100k deep would exhaust. Strings are dropped
    first (brackets inside them do not nest); then each round removes the innermost `[]`/`{}` pairs, in C.
    """
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    for _ in range(limit):
        if not brackets:
            return True
        shorter = brackets.replace("[]", "").replace("{}", "")
        if shorter == brackets:  # mismatched: json.loads rejects it, and recurses at most this deep first
            return len(brackets) <= limit
        brackets = shorter
    return not brackets


def parse_frame(text: str) -> BaseModel:
    if len(text.encode()) > MAX_FRAME_BYTES:
        raise FrameError("frame_too_large", f"frames are limited to {MAX_FRAME_BYTES} bytes")
    if not nesting_within(text):
        raise FrameError("frame_too_deep", f"frames may nest arrays and objects at most {MAX_FRAME_DEPTH} deep")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FrameError("invalid_json", f"frame is not JSON: {exc.msg}") from exc
    if not isinstance(raw, dict):
        raise FrameError("invalid_frame", "a frame must be a JSON object with a `type`")
    model = FRAME_TYPES.get(str(raw.get("type")))
    if model is None:
        raise FrameError(
            "unknown_frame_type", f"unknown frame type {raw.get('type')!r}; use message, cancel or command"
        )
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "frame"
        raise FrameError("invalid_frame", f"{where}: {first['msg']}") from exc


def error_frame(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": message, **extra}
