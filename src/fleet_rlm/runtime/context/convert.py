"""Bytes of a file or HTTP body to text, dispatched on the declared media type, the file name and a sniff.

Declared types are trusted only when specific: `application/octet-stream` (what browsers send for unknown
files) falls through to the extension and then to the bytes themselves. Binary data nobody can read as text
(images, archives, executables) is refused with `context_file_unsupported`.
"""

from __future__ import annotations

import codecs
import json
import mimetypes
from dataclasses import dataclass, field
from typing import Any

from fleet_rlm.runtime.context.failures import FILE_UNSUPPORTED, context_error
from fleet_rlm.runtime.context.formats import docx_text, html_text, pdf_text

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
HTML = "text/html"
JSON = "application/json"
PLAIN = "text/plain"
JSON_PRETTY_MAX_BYTES = 1024 * 1024
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


def convert_bytes(data: bytes, *, name: str, media_type: str | None) -> Converted:
    """Readable text for `data`; raises `context_file_unsupported` for formats we cannot turn into text."""
    _, charset = split_media_type(media_type)
    kind = detect_media_type(data, name=name, declared=media_type)
    if kind == PDF:
        text, info = pdf_text(data, name=name)
        return Converted(text, kind, info)
    if kind == DOCX:
        text, info = docx_text(data, name=name)
        return Converted(text, kind, info)
    if kind in (HTML, "application/xhtml+xml"):
        text, info = html_text(decode_text(data, charset=charset, name=name), name=name)
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
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
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
