"""Attachments: stage a file (multipart), a URL or pasted text for later turns; read, download, delete."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import FileResponse
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from fleet_rlm.api.auth import CurrentUserDep, Principal
from fleet_rlm.api.deps import DatabaseDep, SettingsDep, TxDep
from fleet_rlm.api.multipart_upload import receive_upload, too_large
from fleet_rlm.config import Settings
from fleet_rlm.errors import Conflict, FleetError, InvalidInput
from fleet_rlm.runtime.context.convert import check_upload, document_limits
from fleet_rlm.schemas.artifacts import AttachmentCreate, AttachmentOut
from fleet_rlm.schemas.common import Responses
from fleet_rlm.services.attachments import (
    absolute_path,
    media_type_for,
    name_from_url,
    prepare_dir,
    relative_path,
    sanitize_filename,
)
from fleet_rlm.services.lookups import owned_attachment, owned_session
from fleet_rlm.store import Database, new_id
from fleet_rlm.store.models import Attachment
from fleet_rlm.store.repos import attachments

router = APIRouter(prefix="/api/v1/attachments", tags=["attachments"])
NOT_FOUND: Responses = {404: {"description": "No such attachment for this user."}}
SAFE_DOWNLOAD_HEADERS = {"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox"}

_BODY_DOC: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary"},
                        "session_id": {"type": "string"},
                        "name": {"type": "string"},
                    },
                }
            },
            "application/json": {"schema": AttachmentCreate.model_json_schema()},
        },
    }
}


@router.post(
    "",
    operation_id="createAttachment",
    response_model=AttachmentOut,
    status_code=201,
    openapi_extra=_BODY_DOC,
    responses={
        413: {"description": "Larger than upload_max_bytes, or a document over a document limit."},
        404: {"description": "Unknown session."},
    },
)
async def create_attachment(
    request: Request, user: CurrentUserDep, database: DatabaseDep, settings: SettingsDep
) -> AttachmentOut:
    """Upload a file (multipart/form-data), or stage a `url` or `text` (JSON). `session_id` is optional."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == "multipart/form-data":
        return await _from_multipart(request, user, database, settings)
    if content_type == "application/json":
        try:
            body = AttachmentCreate.model_validate_json(await request.body())
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "body"
            raise InvalidInput(f"{where}: {first.get('msg')}", action="fix the named field and retry") from exc
        return await _from_json(body, user, database, settings)
    raise FleetError(
        f"unsupported content type {content_type or 'none'!r}",
        code="unsupported_media_type",
        status=415,
        action="send multipart/form-data with a `file` part, or JSON with `url` or `text`",
    )


async def _from_multipart(request: Request, user: Principal, db: Database, settings: Settings) -> AttachmentOut:
    attachment_id = new_id()
    final = prepare_dir(settings, user.user_id) / attachment_id
    partial = final.with_name(f"{attachment_id}.part")
    try:
        upload = await receive_upload(request, partial, max_bytes=settings.upload_max_bytes)
        name = sanitize_filename(upload.fields.get("name") or upload.filename)
        session_id = upload.fields.get("session_id") or None
        media_type = media_type_for(upload.content_type, name)
        # a zip bomb or binary data is refused now, from its first bytes; turns convert under limits too
        limits = document_limits(settings)
        await run_in_threadpool(check_upload, partial, name=name, limits=limits, media_type=media_type)
        row = await _record(
            db,
            user,
            attachment_id=attachment_id,
            session_id=session_id,
            kind="file",
            name=name,
            media_type=media_type,
            size=upload.size,
            sha256=upload.sha256,
            storage_path=relative_path(user.user_id, attachment_id),
            before_commit=lambda: os.replace(partial, final),
        )
    finally:
        partial.unlink(missing_ok=True)
    return AttachmentOut.model_validate(row)


async def _from_json(body: AttachmentCreate, user: Principal, db: Database, settings: Settings) -> AttachmentOut:
    attachment_id = new_id()
    if body.url is not None:
        if not body.url.lower().startswith(("http://", "https://")):
            raise InvalidInput("url must start with http:// or https://", code="invalid_url", action="give a web URL")
        row = await _record(
            db,
            user,
            attachment_id=attachment_id,
            session_id=body.session_id,
            kind="url",
            name=sanitize_filename(body.name) if body.name else name_from_url(body.url),
            media_type=None,
            size=0,
            sha256="",
            storage_path="",
            source_url=body.url,
        )
        return AttachmentOut.model_validate(row)
    data = (body.text or "").encode("utf-8")
    if len(data) > settings.upload_max_bytes:
        raise too_large(settings.upload_max_bytes)
    final = prepare_dir(settings, user.user_id) / attachment_id
    partial = final.with_name(f"{attachment_id}.part")
    try:
        partial.write_bytes(data)
        storage_path = relative_path(user.user_id, attachment_id)
        row = await _record(
            db,
            user,
            attachment_id=attachment_id,
            session_id=body.session_id,
            kind="text",
            name=sanitize_filename(body.name, default="pasted.txt"),
            media_type="text/plain; charset=utf-8",
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            storage_path=storage_path,
            text_path=storage_path,
            before_commit=lambda: os.replace(partial, final),
        )
    finally:
        partial.unlink(missing_ok=True)
    return AttachmentOut.model_validate(row)


async def _record(
    db: Database,
    user: Principal,
    *,
    session_id: str | None,
    before_commit: Callable[[], None] | None = None,
    **fields: Any,
) -> Attachment:
    """Insert the row (checking the session is the caller's); the file is moved in place before commit."""
    async with db.transaction() as s:
        if session_id is not None:
            await owned_session(s, user_id=user.user_id, session_id=session_id)
        row = await attachments.create_attachment(s, user_id=user.user_id, session_id=session_id, **fields)
        if before_commit is not None:
            before_commit()
    return row


@router.get("/{attachment_id}", operation_id="getAttachment", response_model=AttachmentOut, responses=NOT_FOUND)
async def get_attachment(attachment_id: str, user: CurrentUserDep, s: TxDep) -> AttachmentOut:
    row = await owned_attachment(s, user_id=user.user_id, attachment_id=attachment_id)
    return AttachmentOut.model_validate(row)


@router.get(
    "/{attachment_id}/content",
    operation_id="getAttachmentContent",
    response_class=FileResponse,
    responses={
        **NOT_FOUND,
        200: {"description": "The stored bytes with their media type.", "content": {"application/octet-stream": {}}},
        409: {"description": "A url attachment: nothing is stored."},
    },
)
async def get_attachment_content(
    attachment_id: str, user: CurrentUserDep, s: TxDep, settings: SettingsDep
) -> FileResponse:
    """Download the stored bytes (as an attachment, never rendered inline)."""
    row = await owned_attachment(s, user_id=user.user_id, attachment_id=attachment_id)
    if row.kind == "url":
        raise Conflict(
            "a url attachment stores no bytes",
            details={"url": row.source_url},
            code="no_stored_content",
        )
    return FileResponse(
        absolute_path(settings, row.storage_path),
        media_type=row.media_type or "application/octet-stream",
        filename=row.name,
        headers=SAFE_DOWNLOAD_HEADERS,
    )


@router.delete("/{attachment_id}", operation_id="deleteAttachment", status_code=204, responses=NOT_FOUND)
async def delete_attachment(attachment_id: str, user: CurrentUserDep, s: TxDep, settings: SettingsDep) -> Response:
    row = await owned_attachment(s, user_id=user.user_id, attachment_id=attachment_id)
    await attachments.delete_attachment(s, user_id=user.user_id, attachment_id=attachment_id)
    if row.storage_path:
        (settings.data_dir / row.storage_path).unlink(missing_ok=True)
    return Response(status_code=204)
