"""Share a session: the export bundle as one HTML file, as Markdown, or as the JSON bundle, redacted.

Who decides what: the bundle (what the session holds) comes from `build_export`; redaction from
`share_redact`; the tree from `share_tree` (the one step grouping); the forms from `share_html` and
`share_markdown`. Artifacts are read here, through `guestfs` (workspace files are sandbox-written: hostile),
bounded per file and in total; images are inlined only when their bytes are what their type claims.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fleet_rlm.config import Settings
from fleet_rlm.sandbox import guestfs
from fleet_rlm.schemas.artifacts import ArtifactOut
from fleet_rlm.schemas.sessions import SessionExport
from fleet_rlm.services.export import build_export
from fleet_rlm.services.share_html import render_html
from fleet_rlm.services.share_markdown import render_markdown
from fleet_rlm.services.share_redact import Redactor, share_redactor
from fleet_rlm.services.share_tree import ArtifactView, build_view
from fleet_rlm.store import Database

ShareFormat = Literal["json", "html", "markdown"]
MAX_TEXT_BYTES = 128 * 1024  # per inlined text artifact
MAX_IMAGE_BYTES = 1024 * 1024  # per inlined image
MAX_INLINE_TOTAL = 8 * 1024 * 1024  # all inlined artifacts of one export
IMAGE_MAGIC = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/x-yaml", "application/yaml")
TEXT_SUFFIXES = frozenset({".txt", ".md", ".csv", ".tsv", ".json", ".jsonl", ".py", ".yaml", ".yml", ".log", ".xml"})
MEDIA = {"json": "application/json", "html": "text/html; charset=utf-8", "markdown": "text/markdown; charset=utf-8"}
SUFFIX = {"json": "json", "html": "html", "markdown": "md"}


@dataclass(frozen=True)
class Owner:
    """Whose session it is and where their workspace lives (what redaction hides)."""

    user_id: str
    names: tuple[str | None, ...]
    workspace_id: str | None
    workspace_root: Path | None


@dataclass(frozen=True)
class SharedFile:
    content: str
    media_type: str
    filename: str
    redactions: dict[str, int]  # what was replaced, counts by kind (also written in the file itself)


async def share_session(
    db: Database, settings: Settings, *, owner: Owner, session_id: str, fmt: ShareFormat, redact: bool | None = None
) -> SharedFile:
    """The session in `fmt`. `redact` (identities and host paths) defaults to on for html/markdown, off for
    json (the archival bundle); secrets are removed in every format either way."""
    identify = fmt != "json" if redact is None else redact
    bundle = await build_export(db, user_id=owner.user_id, session_id=session_id)
    redactor = share_redactor(
        settings,
        identify=identify,
        user_id=owner.user_id,
        user_names=owner.names,
        workspace_id=owner.workspace_id,
        workspace_root=owner.workspace_root,
    )
    data = redactor.value(bundle.model_dump(mode="json"))
    filename = f"fleet-session-{session_id}.{SUFFIX[fmt]}"
    if fmt == "json":
        data["redactions"] = redactor.redactions
        return SharedFile(json.dumps(data, ensure_ascii=False), MEDIA[fmt], filename, redactor.redactions)
    clean = SessionExport.model_validate(data)
    artifacts = []
    if fmt == "html" and owner.workspace_root is not None:
        artifacts = await asyncio.to_thread(_read_artifacts, owner.workspace_root, bundle.artifacts, redactor)
    else:
        artifacts = [ArtifactView(a.name, a.media_type, a.size) for a in clean.artifacts]
    view = build_view(clean, artifacts=artifacts, redaction=redactor.report())
    content = render_html(view) if fmt == "html" else render_markdown(view)
    return SharedFile(content, MEDIA[fmt], filename, redactor.redactions)


def _read_artifacts(root: Path, rows: list[ArtifactOut], redactor: Redactor) -> list[ArtifactView]:
    budget = MAX_INLINE_TOTAL
    views = []
    for row in rows:
        view = ArtifactView(redactor.text(row.name), row.media_type, row.size)
        views.append(view)
        kind = _kind(row)
        if kind is None:
            view.note = "not inlined (binary)"
            continue
        limit = MAX_IMAGE_BYTES if kind == "image" else MAX_TEXT_BYTES
        if kind == "image" and row.size > min(limit, budget):
            view.note = "not inlined (image too large)"
            continue
        try:
            fd, _ = guestfs.open_file(root, row.path)
        except OSError:
            view.note = "not inlined (the file is gone or not readable)"
            continue
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(min(limit, budget) + 1)
        budget -= min(len(data), limit)
        if kind == "image":
            if len(data) > limit or not data.startswith(IMAGE_MAGIC[str(row.media_type)]):
                view.note = "not inlined (not a valid image of its type)"
                continue
            view.data_uri = f"data:{row.media_type};base64,{base64.b64encode(data).decode('ascii')}"
            continue
        text = data[:limit].decode("utf-8", errors="replace")
        view.text = redactor.text(text)
        if len(data) > limit:
            view.note = f"first {limit // 1024} KiB shown"
        if budget <= 0:
            break
    return views


def _kind(row: ArtifactOut) -> str | None:
    media = (row.media_type or "").split(";")[0].strip().lower()
    if media in IMAGE_MAGIC:
        return "image"
    if media.startswith(TEXT_TYPES) or Path(row.name).suffix.lower() in TEXT_SUFFIXES:
        return "text"
    return None
