"""Artifacts: files runs produced in the caller's workspace, listed by session/run and downloadable."""

from __future__ import annotations

import os
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.api.deps import TxDep
from fleet_rlm.api.pagination import PageDep
from fleet_rlm.api.routes.attachments import SAFE_DOWNLOAD_HEADERS
from fleet_rlm.schemas.artifacts import ArtifactOut, ArtifactPage
from fleet_rlm.schemas.common import Responses
from fleet_rlm.services.lookups import owned_artifact, owned_run, owned_session
from fleet_rlm.services.volume import open_confined
from fleet_rlm.store.repos import artifacts

router = APIRouter(prefix="/api/v1/artifacts", tags=["artifacts"])
NOT_FOUND: Responses = {404: {"description": "No such artifact for this user."}}
CHUNK = 64 * 1024


@router.get("", operation_id="listArtifacts", response_model=ArtifactPage)
async def list_artifacts(
    user: CurrentUserDep,
    s: TxDep,
    page: PageDep,
    session_id: Annotated[str | None, Query(description="Only this session's artifacts.")] = None,
    run_id: Annotated[str | None, Query(description="Only this run's artifacts.")] = None,
) -> ArtifactPage:
    """The caller's artifacts, newest first; a session or run filter must name one of the caller's (else 404)."""
    if session_id is not None:
        await owned_session(s, user_id=user.user_id, session_id=session_id)
    if run_id is not None:
        await owned_run(s, user_id=user.user_id, run_id=run_id)
    found = await artifacts.list_artifacts(
        s, user_id=user.user_id, session_id=session_id, run_id=run_id, limit=page.limit, offset=page.offset
    )
    items = [ArtifactOut.model_validate(row) for row in found.items]
    return ArtifactPage(items=items, total=found.total, limit=found.limit, offset=found.offset)


@router.get("/{artifact_id}", operation_id="getArtifact", response_model=ArtifactOut, responses=NOT_FOUND)
async def get_artifact(artifact_id: str, user: CurrentUserDep, s: TxDep) -> ArtifactOut:
    row = await owned_artifact(s, user_id=user.user_id, artifact_id=artifact_id)
    return ArtifactOut.model_validate(row)


@router.get(
    "/{artifact_id}/content",
    operation_id="getArtifactContent",
    response_class=StreamingResponse,
    responses={
        **NOT_FOUND,
        200: {"description": "The file's bytes.", "content": {"application/octet-stream": {}}},
        400: {"description": "The recorded path leaves the workspace."},
    },
)
async def get_artifact_content(artifact_id: str, user: CurrentUserDep, s: TxDep) -> StreamingResponse:
    """Download the artifact from the caller's workspace (confined: a path or symlink leaving it is refused)."""
    row = await owned_artifact(s, user_id=user.user_id, artifact_id=artifact_id)
    fd, info = open_confined(user.workspace_root, row.path)

    def chunks() -> object:
        with os.fdopen(fd, "rb") as handle:
            while block := handle.read(CHUNK):
                yield block

    headers = {
        **SAFE_DOWNLOAD_HEADERS,
        "Content-Length": str(info.st_size),
        "Content-Disposition": f'attachment; filename="{_ascii_name(row.name)}"',
    }
    return StreamingResponse(
        chunks(),  # type: ignore[arg-type]
        media_type=row.media_type or "application/octet-stream",
        headers=headers,
    )


def _ascii_name(name: str) -> str:
    cleaned = "".join(ch if 32 <= ord(ch) < 127 and ch not in '"\\' else "_" for ch in name)
    return cleaned or "artifact"
