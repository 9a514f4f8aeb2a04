"""Pasted text, the loader's contract (variable, manifest, emit, cancel, limits) and idempotent writes."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context import ContextLimits, LoadedContext, load_context
from fleet_rlm.runtime.contracts import CancelToken, ContextSource

from .conftest import ctx_of, make_settings


def test_text_source_is_written_to_buffers_and_read_by_reference(workspace: Path, ctx_settings: Settings) -> None:
    text = "alpha beta\nsecond line ü\n"
    loaded = load_context(
        [ContextSource(kind="text", name="notes", text=text)],
        workspace_dir=workspace,
        context_dir=ctx_of(workspace),
        settings=ctx_settings,
    )

    [doc] = loaded.documents
    digest = hashlib.sha256(text.encode()).hexdigest()
    assert doc.path == f"{digest[:16]}-notes.txt"
    assert doc.file.read_text(encoding="utf-8") == text
    assert (doc.name, doc.kind, doc.chars, doc.sha256, doc.truncated) == ("notes", "text", len(text), digest, False)
    assert doc.media_type == "text/plain"
    assert loaded.total_chars == len(text)


def test_variable_has_headers_in_source_order_and_is_cached(workspace: Path, ctx_settings: Settings) -> None:
    sources = [ContextSource(kind="text", name="a", text="first"), ContextSource(kind="text", text="second!")]
    loaded = load_context(sources, workspace_dir=workspace, context_dir=ctx_of(workspace), settings=ctx_settings)

    variable = loaded.as_variable()
    assert variable == "=== a (text, 5 chars) ===\nfirst\n\n=== pasted text (text, 7 chars) ===\nsecond!"
    assert loaded.as_variable() is variable
    assert LoadedContext([]).as_variable() == ""


def test_text_property_reads_the_workspace_file_when_not_held(workspace: Path, ctx_settings: Settings) -> None:
    loaded = load_context(
        [ContextSource(kind="text", text="on disk")],
        workspace_dir=workspace,
        context_dir=ctx_of(workspace),
        settings=ctx_settings,
    )
    doc = loaded.documents[0]
    doc._text = None
    assert doc.text == "on disk"


def test_manifest_and_emit_once_per_source(workspace: Path, ctx_settings: Settings) -> None:
    events: list[tuple[str, int, dict[str, Any]]] = []
    sources = [ContextSource(kind="text", name="x", text="12345"), ContextSource(kind="text", name="y", text="ab")]

    loaded = load_context(
        sources,
        workspace_dir=workspace,
        context_dir=ctx_of(workspace),
        settings=ctx_settings,
        emit=lambda *args: events.append(args),
    )

    assert [(kind, size) for kind, size, _ in events] == [("text", 5), ("text", 2)]
    manifest = loaded.manifest()
    assert [entry["name"] for entry in manifest] == ["x", "y"]
    assert events[0][2] == manifest[0]
    assert set(manifest[0]) >= {"name", "kind", "path", "chars", "sha256", "media_type", "truncated"}


def test_same_content_is_not_rewritten(workspace: Path, ctx_settings: Settings) -> None:
    source = ContextSource(kind="text", name="same", text="stable content " * 100)
    first = load_context(
        [source], workspace_dir=workspace, context_dir=ctx_of(workspace), settings=ctx_settings
    ).documents[0]
    path = first.file
    before = path.stat()

    second = load_context(
        [source], workspace_dir=workspace, context_dir=ctx_of(workspace), settings=ctx_settings
    ).documents[0]

    after = path.stat()
    assert second.path == first.path
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert (first.info["reused"], second.info["reused"]) == (False, True)
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_forty_million_characters_load_into_one_file(workspace: Path, ctx_settings: Settings) -> None:
    big = "0123456789abcdefghijklmnopqrstuvwxyz\n" * (40_000_000 // 37 + 1)
    loaded = load_context(
        [ContextSource(kind="text", name="big", text=big)],
        workspace_dir=workspace,
        context_dir=ctx_of(workspace),
        settings=ctx_settings,
    )

    doc = loaded.documents[0]
    assert doc.chars == len(big) >= 40_000_000
    assert doc.text is big  # the loader keeps the caller's string instead of a copy
    assert doc.file.stat().st_size == len(big)
    assert loaded.as_variable().endswith(big[-100:])


def test_text_larger_than_upload_limit_is_refused(workspace: Path, tmp_path: Path) -> None:
    settings = make_settings(tmp_path, upload_max_bytes=10)
    with pytest.raises(FleetError) as caught:
        load_context(
            [ContextSource(kind="text", text="x" * 11)],
            workspace_dir=workspace,
            context_dir=ctx_of(workspace),
            settings=settings,
        )
    assert caught.value.code == "context_too_large"
    assert caught.value.action


def test_total_characters_are_bounded(workspace: Path, ctx_settings: Settings) -> None:
    sources = [ContextSource(kind="text", text="a" * 60), ContextSource(kind="text", text="b" * 60)]
    with pytest.raises(FleetError) as caught:
        load_context(
            sources,
            workspace_dir=workspace,
            context_dir=ctx_of(workspace),
            settings=ctx_settings,
            limits=ContextLimits(max_total_chars=100),
        )
    assert caught.value.code == "context_too_large"


def test_cancel_is_checked_between_sources(workspace: Path, ctx_settings: Settings) -> None:
    cancel = CancelToken()
    seen: list[str] = []

    def emit(kind: str, size: int, info: dict[str, Any]) -> None:
        seen.append(info["name"])
        cancel.cancel()

    sources = [ContextSource(kind="text", name="one", text="1"), ContextSource(kind="text", name="two", text="2")]
    with pytest.raises(FleetError) as caught:
        load_context(
            sources,
            workspace_dir=workspace,
            context_dir=ctx_of(workspace),
            settings=ctx_settings,
            emit=emit,
            cancel=cancel,
        )
    assert caught.value.code == "context_cancelled"
    assert seen == ["one"]


@pytest.mark.parametrize(
    "source",
    [ContextSource(kind="text"), ContextSource(kind="url"), ContextSource(kind="file"), ContextSource(kind="bogus")],  # type: ignore[arg-type]
)
def test_incomplete_or_unknown_sources_are_invalid(
    workspace: Path, ctx_settings: Settings, source: ContextSource
) -> None:
    with pytest.raises(FleetError) as caught:
        load_context([source], workspace_dir=workspace, context_dir=ctx_of(workspace), settings=ctx_settings)
    assert caught.value.code == "context_source_invalid"


def test_unsafe_names_cannot_escape_the_context_directory(workspace: Path, ctx_settings: Settings) -> None:
    loaded = load_context(
        [ContextSource(kind="text", name="../../etc/passwd", text="x")],
        workspace_dir=workspace,
        context_dir=ctx_of(workspace),
        settings=ctx_settings,
    )
    doc = loaded.documents[0]
    assert doc.file.parent == ctx_of(workspace)
    assert "/" not in doc.path
    assert doc.name == "../../etc/passwd"
