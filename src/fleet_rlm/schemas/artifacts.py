"""Artifacts (run outputs) and attachments (staged inputs)."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field, model_validator

from fleet_rlm.schemas.common import In, Out, PageMeta


class ArtifactOut(Out):
    id: str
    session_id: str
    run_id: str | None
    name: str
    path: str = Field(description="Path inside the workspace, e.g. artifacts/report.md.")
    size: int
    sha256: str
    media_type: str | None
    created_at: datetime


class ArtifactPage(PageMeta):
    items: list[ArtifactOut]


class AttachmentOut(Out):
    id: str
    session_id: str | None
    kind: str = Field(description="file, url or text.")
    name: str
    media_type: str | None
    size: int = Field(description="Bytes stored (0 for url attachments, fetched at turn time).")
    sha256: str = Field(description="SHA-256 of the stored bytes (empty for url attachments).")
    source_url: str | None
    created_at: datetime


class AttachmentCreate(In):
    """JSON form of POST /attachments: exactly one of `url` or `text` (files use multipart)."""

    url: str | None = Field(default=None, max_length=4096)
    text: str | None = None
    name: str | None = Field(default=None, max_length=255)
    session_id: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> AttachmentCreate:
        if (self.url is None) == (self.text is None):
            raise ValueError("give exactly one of `url` or `text` (upload files as multipart/form-data)")
        return self
