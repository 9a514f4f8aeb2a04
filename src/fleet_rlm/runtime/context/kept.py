"""Sources a session already holds: the document an earlier turn loaded, used again as it is.

A later turn gets each of its session's sources by reference (`ContextSource.document`, `from_turn`): the file
already in the session's context directory is read, not loaded again, so a URL keeps the content fetched on
the turn that added it, an attachment is not converted again, and nothing is written twice. When the document
is gone (a replay's scratch session) the source is loaded from its reference like a new one, if it can be.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from fleet_rlm.runtime.context.documents import LoadedDocument
from fleet_rlm.runtime.context.failures import FILE_MISSING, context_error
from fleet_rlm.runtime.contracts import ContextSource


def kept_document(source: ContextSource, *, context_dir: Path) -> LoadedDocument | None:
    """The session's document of `source`, or None when it is not in `context_dir` (load it by reference)."""
    name = source.document or ""
    if not name or "/" in name or "\\" in name or name.startswith(".") or "\x00" in name:
        return None
    try:
        data = (context_dir / name).read_bytes()
    except OSError:  # removed, or never in this session's directory
        return None
    text = data.decode("utf-8", "replace")
    info: dict[str, object] = {"reused": True, "from_turn": source.from_turn}
    if source.attachment_id:
        info["attachment_id"] = source.attachment_id
    return LoadedDocument(
        name=source.name or name,
        kind=source.kind,
        path=name,
        chars=len(text),
        sha256=hashlib.sha256(data).hexdigest(),
        media_type=source.media_type or "text/plain",
        truncated=False,
        context_dir=context_dir,
        info=info,
        _text=text,
    )


def unloadable(source: ContextSource) -> bool:
    """A held source whose document is gone and whose reference cannot load it again (pasted text keeps no
    copy elsewhere; an attachment named only by id needs its row)."""
    if source.kind == "text":
        return source.text is None
    if source.kind == "file":
        return not source.path
    return False


def missing_kept(source: ContextSource) -> Exception:
    name = source.name or source.kind
    return context_error(
        FILE_MISSING,
        f"the context {name!r} added on turn {source.from_turn} is no longer stored",
        "remove it from the session's context and attach it again",
        status=404,
        name=name,
    )
