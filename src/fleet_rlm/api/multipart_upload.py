"""Stream one multipart/form-data file straight to disk, hashing and counting as it arrives.

Starlette's form parser spools the whole file before a route sees it; here the size limit applies to every
chunk, so an oversized upload stops at `max_bytes` (413) instead of filling the disk first. Exactly one file
part (any field name, conventionally `file`) and a few small text fields (e.g. `session_id`, `name`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import ClientDisconnect, Request

from fleet_rlm.errors import FleetError, InvalidInput

MAX_FIELD_BYTES = 64 * 1024
MAX_FIELDS = 16


def incomplete() -> FleetError:
    return FleetError(
        "the upload ended before its closing multipart boundary",
        code="upload_incomplete",
        status=400,
        action="send the whole file again (the connection was cut or the body was truncated)",
    )


def too_large(limit: int) -> FleetError:
    return FleetError(
        f"the upload is larger than the {limit}-byte limit",
        code="payload_too_large",
        status=413,
        action="upload a smaller file, or raise FLEET_UPLOAD_MAX_BYTES on the server",
    )


@dataclass
class UploadedFile:
    filename: str
    content_type: str | None
    size: int
    sha256: str
    fields: dict[str, str] = field(default_factory=dict)


@dataclass
class _Part:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    name: str = ""
    filename: str | None = None
    data: bytearray = field(default_factory=bytearray)


class _Receiver:
    """python-multipart callbacks: file bytes go to `sink`, small fields are kept in memory."""

    def __init__(self, sink: IO[bytes], max_bytes: int) -> None:
        self.sink = sink
        self.max_bytes = max_bytes
        self.hasher = hashlib.sha256()
        self.size = 0
        self.part = _Part()
        self.header_name = b""
        self.header_value = b""
        self.file: _Part | None = None
        self.fields: dict[str, str] = {}
        self.ended = False

    def callbacks(self) -> dict[str, Any]:
        return {
            "on_part_begin": self.on_part_begin,
            "on_header_field": lambda d, s, e: self._add("header_name", d[s:e]),
            "on_header_value": lambda d, s, e: self._add("header_value", d[s:e]),
            "on_header_end": self.on_header_end,
            "on_headers_finished": self.on_headers_finished,
            "on_part_data": self.on_part_data,
            "on_part_end": self.on_part_end,
            "on_end": self.on_end,
        }

    def _add(self, attr: str, chunk: bytes) -> None:
        setattr(self, attr, getattr(self, attr) + chunk)

    def on_part_begin(self) -> None:
        self.part = _Part()

    def on_header_end(self) -> None:
        self.part.headers[self.header_name.lower()] = self.header_value
        self.header_name = self.header_value = b""

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self.part.headers.get(b"content-disposition", b""))
        self.part.name = options.get(b"name", b"").decode("utf-8", "replace")
        if b"filename" in options:
            if self.file is not None:
                raise InvalidInput(
                    "only one file per upload", code="too_many_files", action="send one file per request"
                )
            self.part.filename = options[b"filename"].decode("utf-8", "replace")
            self.file = self.part
        elif len(self.fields) >= MAX_FIELDS:
            raise InvalidInput("too many form fields", action=f"send at most {MAX_FIELDS} fields")

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        chunk = data[start:end]
        if self.part is self.file:
            self.size += len(chunk)
            if self.size > self.max_bytes:
                raise too_large(self.max_bytes)
            self.hasher.update(chunk)
            self.sink.write(chunk)
        else:
            if len(self.part.data) + len(chunk) > MAX_FIELD_BYTES:
                raise InvalidInput(f"form field {self.part.name!r} is too long", action="keep fields under 64 KiB")
            self.part.data.extend(chunk)

    def on_end(self) -> None:
        self.ended = True

    def on_part_end(self) -> None:
        if self.part is not self.file and self.part.name:
            self.fields[self.part.name] = self.part.data.decode("utf-8", "replace")


async def receive_upload(request: Request, dest: Path, *, max_bytes: int) -> UploadedFile:
    """Write the request's single file part to `dest`; raises 400/413/422 FleetErrors (the caller removes `dest`).

    Only a body that reaches its closing boundary counts: a truncated one is `400 upload_incomplete`.
    """
    _, params = parse_options_header(request.headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if not boundary:
        raise InvalidInput("multipart body without a boundary", code="invalid_multipart")
    with dest.open("wb") as sink:
        receiver = _Receiver(sink, max_bytes)
        parser = MultipartParser(boundary, receiver.callbacks())  # type: ignore[arg-type]
        try:
            async for chunk in request.stream():
                parser.write(chunk)
            parser.finalize()
        except FormParserError as exc:
            raise InvalidInput(
                "the multipart body is malformed", code="invalid_multipart", action="send valid multipart/form-data"
            ) from exc
        except ClientDisconnect as exc:  # fewer bytes than Content-Length, then the connection closed
            raise incomplete() from exc
    if not receiver.ended:  # python-multipart's finalize() accepts a body cut before its closing boundary
        raise incomplete()
    if receiver.file is None:
        raise InvalidInput("the upload has no file part", code="missing_file", action="send the file in a `file` field")
    content_type = receiver.file.headers.get(b"content-type", b"").decode("latin-1").strip() or None
    return UploadedFile(
        filename=receiver.file.filename or "",
        content_type=content_type,
        size=receiver.size,
        sha256=receiver.hasher.hexdigest(),
        fields=receiver.fields,
    )
