"""Workspace paths: files and directories inside the workspace, and every way of trying to leave it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context import ContextLimits, LoadedDocument, load_context
from fleet_rlm.runtime.contracts import ContextSource

from .conftest import ctx_of, make_settings
from .factories import make_pdf


def _load(path: str, workspace: Path, settings: Settings, limits: ContextLimits | None = None) -> LoadedDocument:
    source = ContextSource(kind="path", path=path)
    return load_context(
        [source], workspace_dir=workspace, context_dir=ctx_of(workspace), settings=settings, limits=limits
    ).documents[0]


def _code(path: str, workspace: Path, settings: Settings) -> str:
    with pytest.raises(FleetError) as caught:
        _load(path, workspace, settings)
    return caught.value.code


def test_a_workspace_file(workspace: Path, ctx_settings: Settings) -> None:
    (workspace / "memory" / "notes.md").write_text("# Notes\nremember this\n")
    doc = _load("memory/notes.md", workspace, ctx_settings)
    assert (doc.kind, doc.name, doc.text) == ("path", "memory/notes.md", "# Notes\nremember this\n")
    assert doc.media_type == "text/markdown"
    assert doc.info["source_path"] == "memory/notes.md"
    assert doc.file.parent == ctx_of(workspace)


def test_a_workspace_pdf_is_converted(workspace: Path, ctx_settings: Settings) -> None:
    (workspace / "artifacts" / "out.pdf").write_bytes(make_pdf(["artifact text"]))
    assert "artifact text" in _load("artifacts/out.pdf", workspace, ctx_settings).text


def test_a_directory_is_listed_and_its_text_files_concatenated(workspace: Path, ctx_settings: Settings) -> None:
    base = workspace / "artifacts" / "run1"
    (base / "sub").mkdir(parents=True)
    (base / "a.txt").write_text("alpha\n")
    (base / "sub" / "b.csv").write_text("x,y\n1,2\n")
    (base / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (base / ".git").mkdir()
    (base / ".git" / "HEAD").write_text("ref: refs/heads/main\n")

    doc = _load("artifacts/run1/", workspace, ctx_settings)

    assert doc.info["files"] == 3 and doc.info["skipped"] == 1
    assert doc.text.startswith("Directory artifacts/run1/ (3 files):\na.txt (6 B)\nimage.png")
    assert "--- artifacts/run1/a.txt ---\nalpha\n" in doc.text
    assert "--- artifacts/run1/sub/b.csv ---\nx,y\n1,2\n" in doc.text
    assert "Not included (binary, unreadable, a link or a special file): artifacts/run1/image.png" in doc.text
    assert "refs/heads" not in doc.text
    assert doc.truncated is False


def test_the_workspace_root_itself(workspace: Path, ctx_settings: Settings) -> None:
    (workspace / "meta" / "m.txt").write_text("meta\n")
    doc = _load(".", workspace, ctx_settings)
    assert doc.text.startswith("Directory ./ (1 files):\nmeta/m.txt")


def test_directory_text_is_bounded(workspace: Path, ctx_settings: Settings) -> None:
    for index in range(5):
        (workspace / "buffers" / f"f{index}.txt").write_text(str(index) * 100)
    doc = _load("buffers", workspace, ctx_settings, ContextLimits(dir_max_chars=250))
    assert doc.truncated is True
    assert doc.text.count("--- buffers/") == 3
    assert "2" * 50 in doc.text and "3" not in doc.text.split("--- buffers/f2.txt ---")[1]


@pytest.mark.parametrize(
    "path", ["../outside.txt", "memory/../../outside.txt", "/etc/passwd", "~/x", "  ", "memory/\x00"]
)
def test_escaping_absolute_or_malformed_paths_are_invalid(workspace: Path, ctx_settings: Settings, path: str) -> None:
    (workspace.parent / "outside.txt").write_text("secret")
    assert _code(path, workspace, ctx_settings) == "context_path_invalid"


def test_missing_paths_are_invalid(workspace: Path, ctx_settings: Settings) -> None:
    with pytest.raises(FleetError) as caught:
        _load("memory/none.md", workspace, ctx_settings)
    assert (caught.value.code, caught.value.status) == ("context_path_invalid", 404)


def test_symlink_escaping_the_workspace_is_refused(workspace: Path, ctx_settings: Settings, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    (workspace / "memory" / "link.txt").symlink_to(secret)
    (workspace / "memory" / "dirlink").symlink_to(tmp_path)

    assert _code("memory/link.txt", workspace, ctx_settings) == "context_path_invalid"
    assert _code("memory/dirlink", workspace, ctx_settings) == "context_path_invalid"
    assert _code("memory/dirlink/secret.txt", workspace, ctx_settings) == "context_path_invalid"

    doc = _load("memory", workspace, ctx_settings)
    assert "top secret" not in doc.text
    assert "memory/link.txt" in doc.text.split("Not included")[1]


def test_symlink_inside_the_workspace_is_refused_too(workspace: Path, ctx_settings: Settings) -> None:
    """The guest can swap a link's target at any moment, so the host follows none, even one pointing inside."""
    (workspace / "artifacts" / "real.txt").write_text("real content")
    (workspace / "memory" / "alias.txt").symlink_to(workspace / "artifacts" / "real.txt")
    with pytest.raises(FleetError) as caught:
        _load("memory/alias.txt", workspace, ctx_settings)
    assert (caught.value.code, caught.value.status) == ("context_path_invalid", 403)
    assert _load("artifacts/real.txt", workspace, ctx_settings).text == "real content"


def test_workspace_file_over_upload_limit(workspace: Path, tmp_path: Path) -> None:
    (workspace / "artifacts" / "big.txt").write_text("x" * 50)
    assert _code("artifacts/big.txt", workspace, make_settings(tmp_path, upload_max_bytes=10)) == "context_too_large"
