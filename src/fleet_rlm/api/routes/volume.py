"""The runtime volume: the caller's workspace (memory/, artifacts/, buffers/, meta/), confined; uploads and
deletes only under memory/ and artifacts/."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.api.deps import SettingsDep
from fleet_rlm.api.multipart_upload import too_large
from fleet_rlm.schemas.common import Responses
from fleet_rlm.schemas.volume import VolumeFile, VolumeTree, VolumeWrite
from fleet_rlm.services.volume import FILE_MAX_BYTES, TREE_MAX_DEPTH, TREE_MAX_ENTRIES, list_tree, read_file
from fleet_rlm.services.volume_write import delete_file, write_file

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


WRITE_ERRORS: Responses = {
    **ERRORS,
    403: {"description": "`volume_read_only`: only memory/ and artifacts/ take uploads and deletes."},
    409: {"description": "`file_exists`: the file exists and `overwrite` is false."},
    413: {"description": "`payload_too_large`: larger than upload_max_bytes."},
}
_RAW_BODY = {"requestBody": {"required": True, "content": {"application/octet-stream": {"schema": {}}}}}


async def _read_bounded(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            raise too_large(limit)
    return bytes(data)


@router.put(
    "/file",
    operation_id="putVolumeFile",
    response_model=VolumeWrite,
    status_code=201,
    responses=WRITE_ERRORS,
    openapi_extra=_RAW_BODY,
)
async def put_volume_file(
    request: Request,
    user: CurrentUserDep,
    settings: SettingsDep,
    path: Annotated[str, Query(min_length=1, max_length=4096, description="memory/... or artifacts/... file.")],
    overwrite: Annotated[bool, Query(description="Replace an existing file's content.")] = False,
) -> VolumeWrite:
    """Upload the raw request body as a file under memory/ or artifacts/ (parents are created; links refused)."""
    data = await _read_bounded(request, settings.upload_max_bytes)
    return await run_in_threadpool(write_file, user.workspace_root, path, data, overwrite=overwrite)


@router.delete("/file", operation_id="deleteVolumeFile", status_code=204, responses=WRITE_ERRORS)
async def delete_volume_file(
    user: CurrentUserDep,
    path: Annotated[str, Query(min_length=1, max_length=4096, description="memory/... or artifacts/... file.")],
) -> Response:
    """Delete a file under memory/ or artifacts/ (a link is removed itself, never its target)."""
    await run_in_threadpool(delete_file, user.workspace_root, path)
    return Response(status_code=204)
