"""Hostile documents built by the tests: zip bombs streamed through `zipfile` (never written inflated to disk).

`docx_bomb` is a DOCX whose word/document.xml is valid, highly repetitive XML that inflates to `inflated`
bytes (1 GiB + by default) from a file of a few MB, like the 1.5 MB -> 1.5 GB file of issue 13.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from tests.runtime.context.factories import assemble_pdf

GIB = 1024 * 1024 * 1024
_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Target="word/document.xml" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"/></Relationships>'
)
_DOC_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
)
_DOC_TAIL = b"</w:body></w:document>"


def docx_bomb(path: Path, inflated: int = GIB + 1) -> Path:
    """A DOCX whose document.xml streams `inflated` bytes of paragraphs through deflate (level 1: fast)."""
    paragraph = b"<w:p><w:r><w:t>" + b" " * 4000 + b"</w:t></w:r></w:p>"
    chunk = paragraph * (1024 * 1024 // len(paragraph))
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        with archive.open("word/document.xml", "w", force_zip64=True) as entry:
            entry.write(_DOC_HEAD)
            written = len(_DOC_HEAD) + len(_DOC_TAIL)
            while written < inflated:
                piece = chunk[: inflated - written]
                entry.write(piece)
                written += len(piece)
            entry.write(_DOC_TAIL)
    return path


def many_entries(path: Path, count: int) -> Path:
    """An XLSX-shaped archive of `count` tiny entries (each costs the parser an object, a lookup, a read)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        for index in range(count):
            archive.writestr(f"xl/worksheets/sheet{index}.xml", b"<x/>")
    return path


def nested(path: Path, depth: int, inner_name: str = "embedded.bin") -> Path:
    """A DOCX holding an archive holding an archive ... `depth` levels deep (names hide the nesting)."""
    blob = _zip_bytes({"payload.xml": b"<x/>"})
    for _level in range(depth - 1):
        blob = _zip_bytes({inner_name: blob})
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        archive.writestr("word/document.xml", _DOC_HEAD + b"<w:p><w:r><w:t>hi</w:t></w:r></w:p>" + _DOC_TAIL)
        archive.writestr(f"word/embeddings/{inner_name}", blob)
    return path


def _zip_bytes(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return out.getvalue()


def pdf_with_stream(inflated: int) -> bytes:
    """A one-page PDF whose content stream is a FlateDecode stream of `inflated` bytes of spaces."""
    import zlib

    compressor = zlib.compressobj(1)
    body = b"".join(compressor.compress(b" " * (1024 * 1024)) for _ in range(inflated // (1024 * 1024)))
    body += compressor.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length " + str(len(body)).encode() + b" /Filter /FlateDecode >>\nstream\n" + body + b"\nendstream",
    ]
    return assemble_pdf(objects)


def docx_dense(path: Path, inflated: int) -> Path:
    """A DOCX of numbered one-word paragraphs: inflates only ~16x, so it passes every zip check, yet its XML
    tree needs many times `inflated` bytes of memory to parse."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        with archive.open("word/document.xml", "w", force_zip64=True) as entry:
            entry.write(_DOC_HEAD)
            written, start = 0, 0
            while written < inflated:
                chunk = b"".join(b"<w:p><w:r><w:t>%d</w:t></w:r></w:p>" % n for n in range(start, start + 20_000))
                entry.write(chunk)
                written, start = written + len(chunk), start + 20_000
            entry.write(_DOC_TAIL)
    return path
