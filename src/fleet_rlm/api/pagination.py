"""Offset paging for listings: `limit` (1..200, default 50) and `offset` (>= 0), validated with clear errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Query

MAX_LIMIT = 200
DEFAULT_LIMIT = 50


@dataclass(frozen=True)
class PageParams:
    limit: int
    offset: int


def page_params(
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description=f"Items per page (at most {MAX_LIMIT}).")] = (
        DEFAULT_LIMIT
    ),
    offset: Annotated[int, Query(ge=0, description="Items to skip.")] = 0,
) -> PageParams:
    return PageParams(limit=limit, offset=offset)


PageDep = Annotated[PageParams, Depends(page_params)]
