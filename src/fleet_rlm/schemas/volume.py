"""The caller's workspace volume: a bounded tree and bounded, read-only file reads."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class VolumeEntry(BaseModel):
    path: str = Field(description="Relative to the workspace root, '/'-separated.")
    name: str
    type: Literal["dir", "file", "symlink", "other"]
    size: int
    mtime: datetime
    depth: int


class VolumeTree(BaseModel):
    root: str = Field(description="The listed directory, relative to the workspace root ('' is the root).")
    entries: list[VolumeEntry]
    truncated: bool = Field(description="True when max_entries cut the listing short.")
    max_depth: int


class VolumeFile(BaseModel):
    path: str
    size: int
    mtime: datetime
    encoding: Literal["utf-8", "base64"]
    content: str
    truncated: bool = Field(description="True when only the first `limit` bytes are returned.")


class VolumeWrite(BaseModel):
    path: str = Field(description="The written file, relative to the workspace root.")
    size: int = Field(description="Bytes written.")
