"""The context sources a session holds, seen from a turn: given to it by reference, and joined by its own.

A turn's request starts with every source of its session (`held_context`: the document an earlier turn
loaded, never loaded again), then the turn's own sources, less those the session already holds (`is_held`:
the same attachment, URL, repository at a ref or workspace path is the held copy; to take a fresh one the
user removes it first; the same content given again is the same document, which the loader puts in once).
When the run commits, the sources the turn loaded itself become rows of the session (`added_rows`), paired
in order with the turn's root `context_loaded` events (the loader emits one per source, in order, until the
first failure).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fleet_rlm.events import ContextLoaded
from fleet_rlm.runtime.context.repo import redact
from fleet_rlm.runtime.contracts import ContextSource
from fleet_rlm.store.models import SessionSource


def held_context(rows: Sequence[SessionSource]) -> list[ContextSource]:
    return [
        ContextSource(
            kind=row.kind,  # type: ignore[arg-type]
            name=row.name,
            path=row.path,
            url=row.url,
            ref=row.ref,
            media_type=row.media_type,
            attachment_id=row.attachment_id,
            document=row.document,
            from_turn=row.turn_index + 1,
        )
        for row in rows
    ]


def is_held(source: ContextSource, held: Sequence[ContextSource]) -> bool:
    """Whether the session already holds `source` (then the turn uses the held copy)."""
    for other in held:
        if other.kind != source.kind:
            continue
        if source.kind == "file" and source.attachment_id and source.attachment_id == other.attachment_id:
            return True
        if source.kind == "url" and source.url == other.url:
            return True
        if source.kind == "repo" and source.url and redact(source.url) == other.url and source.ref == other.ref:
            return True
        if source.kind == "path" and source.path == other.path:
            return True
    return False


def added_rows(
    sources: Sequence[ContextSource],
    loaded: Sequence[ContextLoaded],
    *,
    session_id: str,
    run_id: str,
    turn_index: int,
) -> list[dict[str, Any]]:
    """Session source rows (column dicts) for the sources this turn loaded itself (not the held ones)."""
    rows: list[dict[str, Any]] = []
    for source, event in zip(sources, loaded, strict=False):
        if source.from_turn is not None or event.from_turn is not None or not event.document:
            continue
        rows.append(
            {
                "session_id": session_id,
                "key": f"{source.kind}:{event.document}"[:128],
                "kind": source.kind,
                "label": event.source,
                "name": event.name[:500],
                "document": event.document,
                "clone": event.clone,
                "attachment_id": source.attachment_id,
                "url": redact(source.url) if source.kind == "repo" and source.url else source.url,
                "ref": source.ref,
                "path": source.path if source.kind == "path" else None,
                "media_type": source.media_type,
                "chars": event.chars,
                "bytes": event.bytes,
                "truncated": event.truncated,
                "turn_index": turn_index,
                "run_id": run_id,
            }
        )
    return rows
