"""Bytes of a file or HTTP body to text, dispatched on the declared media type, the file name and a sniff.

Declared types are trusted only when specific: `application/octet-stream` (what browsers send for unknown
files) falls through to the extension and then to the bytes themselves. Binary data nobody can read as text
(images, archives, executables) is refused with `context_file_unsupported`.

Every file, upload, URL body and workspace file that becomes context passes through `convert_bytes`, so this
is where resources are bounded (`fleet_rlm.runtime.docsafe`). Any zip archive is checked from its directory
first (`zipguard`, milliseconds, before a byte is inflated). PDF, DOCX and HTML over 512 KiB are parsed in a
converter process with memory and time limits; their parsers are where bombs and parser bugs live (a 100 KB
PDF can hold a gigabyte-sized stream), and the subprocess costs a few milliseconds once its worker is warm.
Plain text, Markdown, CSV, JSON and code stay in-process: decoding is linear in the input, which upload_max_bytes
already bounds, so they do not pay the round trip. Small HTML stays in-process for the same reason (the parse
of 512 KiB needs tens of MB at most).
"""

from __future__ import annotations

import codecs
import json
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context.failures import FILE_UNSUPPORTED, context_error
from fleet_rlm.runtime.docsafe.formats import html_text
from fleet_rlm.runtime.docsafe.limits import MB, DocumentLimits
from fleet_rlm.runtime.docsafe.pool import shared_pool
from fleet_rlm.runtime.docsafe.zipguard import check_zip, is_zip

if TYPE_CHECKING:
    from fleet_rlm.config import Settings

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
HTML = "text/html"
JSON = "application/json"
PLAIN = "text/plain"
JSON_PRETTY_MAX_BYTES = 1024 * 1024
IN_PROCESS_HTML_MAX_BYTES = 512 * 1024
_SNIFF_BYTES = 8192

_EXTENSIONS = {
    ".pdf": PDF,
    ".docx": DOCX,
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": HTML,
    ".json": JSON,
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".jsonl": "application/jsonl",
    ".ndjson": "application/jsonl",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".txt": PLAIN,
    ".log": PLAIN,
    ".rst": "text/x-rst",
}
_TEXTUAL_APPLICATION = {
    "application/xml",
    "application/yaml",
    "application/x-yaml",
    "application/toml",
    "application/jsonl",
    "application/x-ndjson",
    "application/javascript",
    "application/x-sh",
    "application/sql",
    "application/x-python",
}
_GENERIC = {"", "application/octet-stream", "binary/octet-stream", "application/unknown"}
_BINARY_PREFIXES = ("image/", "audio/", "video/", "font/")
_BOM_ENCODINGS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_BOMS = tuple(bom for bom, _ in _BOM_ENCODINGS)


@dataclass
class Converted:
    text: str
    media_type: str
    info: dict[str, Any] = field(default_factory=dict)


def split_media_type(value: str | None) -> tuple[str, str | None]:
    """`text/html; charset=ISO-8859-1` -> (`text/html`, `iso-8859-1`)."""
    if not value:
        return "", None
    main, _, params = value.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, raw = param.partition("=")
        if key.strip().lower() == "charset" and raw.strip():
            charset = raw.strip().strip("\"'").lower()
    return main.strip().lower(), charset


def detect_media_type(data: bytes, *, name: str, declared: str | None) -> str:
    """The media type that decides the converter: a specific declared type, else the extension, else a sniff."""
    main, _ = split_media_type(declared)
    if main and main not in _GENERIC and main != PLAIN:
        return main
    suffix = "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    if data.startswith(b"%PDF-"):
        return PDF
    head = data[:_SNIFF_BYTES].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return HTML
    if main == PLAIN:
        return PLAIN
    guessed, _ = mimetypes.guess_type(name) if name else (None, None)
    return guessed or (main or "application/octet-stream")


def document_limits(settings: Settings) -> DocumentLimits:
    """The conversion bounds the operator configured (FLEET_DOCUMENT_*, FLEET_CONTEXT_MAX_CHARS)."""
    return DocumentLimits(
        max_uncompressed_bytes=settings.document_max_uncompressed_mb * MB,
        max_entries=settings.document_max_entries,
        max_compression_ratio=settings.document_max_compression_ratio,
        max_nesting=settings.document_max_nesting,
        max_pages=settings.document_max_pages,
        max_chars=settings.context_max_chars,
        timeout_s=settings.document_convert_timeout_s,
        memory_mb=settings.document_convert_memory_mb,
    )


def check_upload(path: Path, *, name: str, limits: DocumentLimits, media_type: str | None = None) -> None:
    """Refuse at upload time what no turn could read: a zip bomb (`document_too_large`, from the archive directory
    alone) and binary data (`context_file_unsupported`, from the first bytes), so the upload creates nothing."""
    with path.open("rb") as handle:
        head = handle.read(_SNIFF_BYTES)
        if is_zip(head[:4]):
            handle.seek(0)
            check_zip(handle, name=name, limits=limits)
    refuse_unreadable(head, name=name, media_type=media_type)


def refuse_unreadable(head: bytes, *, name: str, media_type: str | None) -> None:
    """Raise `context_file_unsupported` for data whose first bytes `convert_bytes` would refuse."""
    kind = detect_media_type(head, name=name, declared=media_type)
    if kind in (PDF, DOCX):
        return
    if _looks_binary(head) and not head.startswith(_BOMS):
        raise _unsupported(name, kind)
    if not _textual(kind) and kind.startswith(_BINARY_PREFIXES):
        raise _unsupported(name, kind)


def _textual(kind: str) -> bool:
    return (
        kind in (HTML, "application/xhtml+xml", JSON)
        or kind.endswith(("+json", "+xml"))
        or kind.startswith("text/")
        or kind in _TEXTUAL_APPLICATION
    )


def convert_bytes(data: bytes, *, name: str, media_type: str | None, limits: DocumentLimits | None = None) -> Converted:
    """Readable text for `data`; raises `context_file_unsupported` for formats we cannot turn into text.

    `limits` defaults to `DocumentLimits()`; callers that have Settings pass `document_limits(settings)`.
    """
    bounds = limits or DocumentLimits()
    _, charset = split_media_type(media_type)
    kind = detect_media_type(data, name=name, declared=media_type)
    if is_zip(data[:4]):
        try:
            check_zip(data, name=name, limits=bounds)
        except FleetError as exc:  # a broken archive is only this function's problem if it claims to be a DOCX
            if exc.code != FILE_UNSUPPORTED or kind == DOCX:
                raise
    if kind == PDF:
        text, info = shared_pool().convert("pdf", data, name=name, limits=bounds)
        return Converted(text, kind, info)
    if kind == DOCX:
        text, info = shared_pool().convert("docx", data, name=name, limits=bounds)
        return Converted(text, kind, info)
    if kind in (HTML, "application/xhtml+xml"):
        html = decode_text(data, charset=charset, name=name)
        if len(data) > IN_PROCESS_HTML_MAX_BYTES:
            text, info = shared_pool().convert("html", html.encode("utf-8"), name=name, limits=bounds)
        else:
            text, info = html_text(html, name=name, limits=bounds)
        return Converted(text, HTML, info)
    if kind == JSON or kind.endswith("+json"):
        return Converted(_json_text(decode_text(data, charset=charset, name=name), len(data)), kind)
    if kind.startswith("text/") or kind in _TEXTUAL_APPLICATION or kind.endswith("+xml"):
        return Converted(decode_text(data, charset=charset, name=name), kind)
    if kind.startswith(_BINARY_PREFIXES) or _looks_binary(data):
        raise _unsupported(name, kind)
    return Converted(decode_text(data, charset=charset, name=name), PLAIN, {"detected_from": kind})


def decode_text(data: bytes, *, charset: str | None, name: str) -> str:
    """UTF-8 (with or without BOM), UTF-16/32 by BOM, else the declared charset, else cp1252 as a last resort."""
    for bom, encoding in _BOM_ENCODINGS:
        if data.startswith(bom):
            return data.decode(encoding, "replace")
    if _looks_binary(data):
        raise _unsupported(name, "binary data")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if charset:
        try:
            return data.decode(charset, "replace")
        except LookupError:
            pass
    return data.decode("cp1252", "replace")


def _json_text(text: str, size: int) -> str:
    if size > JSON_PRETTY_MAX_BYTES:
        return text
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
    except (ValueError, RecursionError):
        return text


def _looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:_SNIFF_BYTES]


def _unsupported(name: str, kind: str) -> Exception:
    return context_error(
        FILE_UNSUPPORTED,
        f"{name!r} ({kind}) cannot be turned into text",
        "attach PDF, DOCX, HTML, Markdown, text, CSV or JSON, or paste the text",
        name=name,
        media_type=kind,
    )
