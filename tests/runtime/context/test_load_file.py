"""Uploaded attachments: each format converted to text, refused types and limits with their codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context import LoadedDocument, load_context
from fleet_rlm.runtime.contracts import ContextSource

from .conftest import ctx_of, make_settings
from .factories import HTML_PAGE, make_docx, make_pdf


def _load(tmp_path: Path, workspace: Path, settings: Settings, name: str, data: bytes, **kw: str) -> LoadedDocument:
    upload = tmp_path / "uploads" / name
    upload.parent.mkdir(exist_ok=True)
    upload.write_bytes(data)
    source = ContextSource(kind="file", name=name, path=str(upload), **kw)
    return load_context([source], workspace_dir=workspace, context_dir=ctx_of(workspace), settings=settings).documents[
        0
    ]


def test_pdf_pages_become_text(tmp_path: Path, workspace: Path, ctx_settings: Settings) -> None:
    doc = _load(tmp_path, workspace, ctx_settings, "paper.pdf", make_pdf(["Hello from page one", "Second (page) text"]))
    assert doc.media_type == "application/pdf"
    assert doc.info["pages"] == 2
    assert "--- page 1 ---\nHello from page one" in doc.text
    assert "--- page 2 ---\nSecond (page) text" in doc.text
    assert doc.file.read_text(encoding="utf-8") == doc.text


def test_docx_keeps_headings_paragraphs_and_tables_in_order(
    tmp_path: Path, workspace: Path, ctx_settings: Settings
) -> None:
    doc = _load(tmp_path, workspace, ctx_settings, "report.docx", make_docx())
    text = doc.text
    assert doc.media_type.endswith("wordprocessingml.document")
    assert text.index("# Quarterly Report") < text.index("Revenue grew") < text.index("## Details")
    assert text.index("## Details") < text.index("region | growth") < text.index("north | 12%") < text.index("Closing")
    assert doc.info["tables"] == 1


def test_html_becomes_readable_markdown_without_scripts(
    tmp_path: Path, workspace: Path, ctx_settings: Settings
) -> None:
    doc = _load(tmp_path, workspace, ctx_settings, "guide.html", HTML_PAGE)
    assert doc.media_type == "text/html"
    assert "# Getting started" in doc.text
    assert "[the package](https://example.org/pkg)" in doc.text
    assert "first step" in doc.text and "second step" in doc.text
    assert "do-not-show" not in doc.text and "color: red" not in doc.text and "enable js" not in doc.text
    assert doc.info["title"] == "Guide Title"


def test_small_json_is_pretty_printed(tmp_path: Path, workspace: Path, ctx_settings: Settings) -> None:
    doc = _load(tmp_path, workspace, ctx_settings, "data.json", b'{"b":[1,2],"a":"\xc3\xa9"}')
    assert doc.text == json.dumps({"b": [1, 2], "a": "é"}, indent=2, ensure_ascii=False) + "\n"


def test_invalid_json_is_kept_verbatim(tmp_path: Path, workspace: Path, ctx_settings: Settings) -> None:
    assert _load(tmp_path, workspace, ctx_settings, "bad.json", b"{not json").text == "{not json"


@pytest.mark.parametrize(
    ("name", "data", "media_type"),
    [
        ("table.csv", b"a,b\n1,2\n", "text/csv"),
        ("readme.md", b"# Title\n\nbody\n", "text/markdown"),
        ("notes.txt", "caf\u00e9\n".encode(), "text/plain"),
    ],
)
def test_text_formats_are_loaded_as_is(
    tmp_path: Path, workspace: Path, ctx_settings: Settings, name: str, data: bytes, media_type: str
) -> None:
    doc = _load(tmp_path, workspace, ctx_settings, name, data)
    assert (doc.text, doc.media_type) == (data.decode(), media_type)


def test_generic_declared_type_falls_back_to_sniffing(tmp_path: Path, workspace: Path, ctx_settings: Settings) -> None:
    doc = _load(tmp_path, workspace, ctx_settings, "blob", make_pdf(["sniffed"]), media_type="application/octet-stream")
    assert doc.media_type == "application/pdf" and "sniffed" in doc.text


def test_legacy_encodings_and_boms_decode(tmp_path: Path, workspace: Path, ctx_settings: Settings) -> None:
    assert _load(tmp_path, workspace, ctx_settings, "a.txt", "Grüße".encode("cp1252")).text == "Grüße"
    assert _load(tmp_path, workspace, ctx_settings, "b.txt", "hi".encode("utf-16")).text == "hi"
    assert _load(tmp_path, workspace, ctx_settings, "c.txt", b"\xef\xbb\xbfbom").text == "bom"


@pytest.mark.parametrize(
    ("name", "data", "media_type"),
    [
        ("photo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", None),
        ("blob.bin", b"\x00\x01\x02binary\x00", None),
        ("archive", b"PK\x03\x04\x00\x00", "application/zip"),
        ("broken.pdf", b"%PDF-1.4\nthis is not really a pdf", None),
        ("broken.docx", b"PK not a docx", None),
    ],
)
def test_unreadable_files_are_unsupported(
    tmp_path: Path, workspace: Path, ctx_settings: Settings, name: str, data: bytes, media_type: str | None
) -> None:
    with pytest.raises(FleetError) as caught:
        _load(tmp_path, workspace, ctx_settings, name, data, **({"media_type": media_type} if media_type else {}))
    assert caught.value.code == "context_file_unsupported"
    assert caught.value.action


def test_missing_attachment(workspace: Path, ctx_settings: Settings, tmp_path: Path) -> None:
    source = ContextSource(kind="file", name="gone.txt", path=str(tmp_path / "nope.txt"))
    with pytest.raises(FleetError) as caught:
        load_context([source], workspace_dir=workspace, context_dir=ctx_of(workspace), settings=ctx_settings)
    assert (caught.value.code, caught.value.status) == ("context_file_missing", 404)


def test_attachment_over_upload_limit(tmp_path: Path, workspace: Path) -> None:
    settings = make_settings(tmp_path, upload_max_bytes=100)
    with pytest.raises(FleetError) as caught:
        _load(tmp_path, workspace, settings, "big.txt", b"x" * 101)
    assert caught.value.code == "context_too_large"


def test_attachment_id_is_kept_in_the_manifest(tmp_path: Path, workspace: Path, ctx_settings: Settings) -> None:
    doc = _load(tmp_path, workspace, ctx_settings, "n.txt", b"note", attachment_id="att_1")
    assert doc.manifest_entry()["attachment_id"] == "att_1"
    assert doc.manifest_entry()["bytes"] == 4


def test_deeply_nested_html_and_json_still_load(tmp_path: Path, workspace: Path, ctx_settings: Settings) -> None:
    html = b"<html><body>" + b"<div>" * 5000 + b"deep text" + b"</div>" * 5000 + b"</body></html>"
    assert "deep text" in _load(tmp_path, workspace, ctx_settings, "deep.html", html).text
    nested = b"[" * 100_000 + b"]" * 100_000
    assert _load(tmp_path, workspace, ctx_settings, "deep.json", nested).text == nested.decode()
