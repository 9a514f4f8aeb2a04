"""Shared bases for API models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Out(BaseModel):
    """A response model that can be built straight from a store row (`Out.model_validate(row)`)."""

    model_config = ConfigDict(from_attributes=True)


class In(BaseModel):
    """A request model: unknown fields are an error, so typos are not silently ignored."""

    model_config = ConfigDict(extra="forbid")


class PageMeta(BaseModel):
    """Paging fields every listing carries next to `items`."""

    total: int
    limit: int
    offset: int


Responses = dict[int | str, dict[str, Any]]
"""The type FastAPI's `responses=` expects (extra documented statuses of a route)."""
