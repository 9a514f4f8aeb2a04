"""`load_context`: the one entry point the turn runner calls before a turn's program starts.

Every source becomes a document file in the session's host-only context directory (`context_dir`, see
`sandbox.context_view`), loaded once per distinct content (a source the session already holds is its earlier
document, `kept`); the runner passes `LoadedContext.as_variable()` as
RLM's `context` input and the session's sandbox sees the files read-only at /context. `workspace_dir` is only
read (`path` sources); nothing is written into the guest-writable workspace.
`emit(kind, size, info)` fires once per loaded source so the runner can publish `context_loaded`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fleet_rlm.config import Settings
from fleet_rlm.runtime.context.documents import LoadedContext, LoadedDocument
from fleet_rlm.runtime.context.failures import SOURCE_INVALID, TOO_LARGE, cancelled, context_error
from fleet_rlm.runtime.context.kept import kept_document, missing_kept, unloadable
from fleet_rlm.runtime.context.sources import (
    ContextLimits,
    load_file,
    load_path,
    load_repo,
    load_text,
    load_url,
)
from fleet_rlm.runtime.contracts import CancelToken, ContextSource

EmitFn = Callable[[str, int, dict[str, Any]], None]


def load_context(
    sources: Sequence[ContextSource],
    *,
    workspace_dir: Path,
    context_dir: Path,
    settings: Settings,
    emit: EmitFn | None = None,
    cancel: CancelToken | None = None,
    limits: ContextLimits | None = None,
) -> LoadedContext:
    """Load every source in order; the first failure raises its `FleetError` (nothing partial is returned)."""
    bounds = limits or ContextLimits.from_settings(settings)
    documents: list[LoadedDocument] = []
    total = 0
    for source in sources:
        if cancel is not None and cancel.cancelled:
            raise cancelled("context loading")
        document = load_source(
            source,
            workspace_dir=workspace_dir,
            context_dir=context_dir,
            settings=settings,
            limits=bounds,
            cancel=cancel,
        )
        if not any(document.path == seen.path for seen in documents):  # the same document twice: in it once
            total += document.chars
            if total > bounds.max_total_chars:
                raise context_error(
                    TOO_LARGE,
                    f"the context has more than {bounds.max_total_chars} characters",
                    "give fewer or smaller sources (or remove some from the session's context)",
                    status=413,
                    limit=bounds.max_total_chars,
                )
            documents.append(document)
        if emit is not None:
            emit(source.kind, document.chars, document.manifest_entry())
    return LoadedContext(documents)


def load_source(
    source: ContextSource,
    *,
    workspace_dir: Path,
    context_dir: Path,
    settings: Settings,
    limits: ContextLimits | None = None,
    cancel: CancelToken | None = None,
) -> LoadedDocument:
    """Load one source (dispatch on `source.kind`) into `context_dir`; a source the session holds is its
    document as an earlier turn loaded it (`kept`)."""
    bounds = limits or ContextLimits.from_settings(settings)
    if source.document:
        kept = kept_document(source, context_dir=context_dir)
        if kept is not None:
            return kept
        if unloadable(source):
            raise missing_kept(source)
    if source.kind == "text":
        return load_text(source, context_dir=context_dir, settings=settings)
    if source.kind == "file":
        return load_file(source, context_dir=context_dir, settings=settings)
    if source.kind == "url":
        return load_url(source, context_dir=context_dir, settings=settings, limits=bounds, cancel=cancel)
    if source.kind == "repo":
        return load_repo(source, context_dir=context_dir, settings=settings, limits=bounds, cancel=cancel)
    if source.kind == "path":
        return load_path(source, workspace_dir=workspace_dir, context_dir=context_dir, settings=settings, limits=bounds)
    raise context_error(
        SOURCE_INVALID, f"unknown context source kind {source.kind!r}", "use text, file, url, repo or path"
    )
