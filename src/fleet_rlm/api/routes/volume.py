"""The runtime volume: the caller's workspace (memory/, artifacts/, buffers/, meta/), read-only and confined."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.schemas.common import Responses
from fleet_rlm.schemas.volume import VolumeFile, VolumeTree
from fleet_rlm.services.volume import FILE_MAX_BYTES, TREE_MAX_DEPTH, TREE_MAX_ENTRIES, list_tree, read_file

router = APIRouter(prefix="/api/v1/runtime/volume", tags=["volume"])
ERRORS: Responses = {
    400: {"description": "`invalid_path`: absolute, '..' or resolving outside the workspace."},
    404: {"description": "No such path in the caller's workspace."},
}


@router.get("/tree", operation_id="getVolumeTree", response_model=VolumeTree, responses=ERRORS)
async def get_volume_tree(
    user: CurrentUserDep,
    path: Annotated[str, Query(max_length=4096, description="Directory relative to the workspace root.")] = "",
    max_depth: Annotated[int, Query(ge=1, le=TREE_MAX_DEPTH, description="Levels below `path` to list.")] = 3,
    max_entries: Annotated[int, Query(ge=1, le=TREE_MAX_ENTRIES, description="Entries to return at most.")] = 1000,
) -> VolumeTree:
    """Names, types, sizes and mtimes under `path` (symlinks are listed, never followed)."""
    return list_tree(user.workspace_root, path, max_depth=max_depth, max_entries=max_entries)


@router.get("/file", operation_id="getVolumeFile", response_model=VolumeFile, responses=ERRORS)
async def get_volume_file(
    user: CurrentUserDep,
    path: Annotated[str, Query(min_length=1, max_length=4096, description="File relative to the workspace root.")],
    max_bytes: Annotated[int, Query(ge=1, le=FILE_MAX_BYTES, description="Bytes to return at most (1 MiB).")] = (
        FILE_MAX_BYTES
    ),
) -> VolumeFile:
    """The start of a file as UTF-8 text (or base64 for binary), with `truncated` when it is longer."""
    return read_file(user.workspace_root, path, max_bytes=max_bytes)
