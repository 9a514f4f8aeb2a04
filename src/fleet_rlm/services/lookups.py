"""Owner-scoped lookups shared by routes: a row of another user is indistinguishable from a missing one (404)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.errors import NotFound
from fleet_rlm.store.models import Artifact, Attachment, ChatSession, Run
from fleet_rlm.store.repos import artifacts, attachments, runs, sessions


def not_found(kind: str, ident: str) -> NotFound:
    return NotFound(f"{kind} {ident} not found", action=f"check the {kind} id (list yours with GET /api/v1/{kind}s)")


async def owned_session(s: AsyncSession, *, user_id: str, session_id: str) -> ChatSession:
    row = await sessions.get_session(s, user_id=user_id, session_id=session_id)
    if row is None:
        raise not_found("session", session_id)
    return row


async def owned_run(s: AsyncSession, *, user_id: str, run_id: str) -> Run:
    row = await runs.get_run(s, run_id=run_id, user_id=user_id)
    if row is None:
        raise NotFound(f"run {run_id} not found", action="check the run id (see a session's runs in its export)")
    return row


async def owned_attachment(s: AsyncSession, *, user_id: str, attachment_id: str) -> Attachment:
    row = await attachments.get_attachment(s, user_id=user_id, attachment_id=attachment_id)
    if row is None:
        raise NotFound(f"attachment {attachment_id} not found", action="check the attachment id")
    return row


async def owned_artifact(s: AsyncSession, *, user_id: str, artifact_id: str) -> Artifact:
    row = await artifacts.get_artifact(s, user_id=user_id, artifact_id=artifact_id)
    if row is None:
        raise not_found("artifact", artifact_id)
    return row
