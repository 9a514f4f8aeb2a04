"""Refuse zip bombs from the archive's directory, before any parser inflates a byte.

DOCX (and XLSX, PPTX, ODT, EPUB, which are refused as unsupported anyway) are zip archives: a 1.5 MB file can
declare entries that inflate to gigabytes. `check_zip` reads the end-of-central-directory record itself (so a
directory of millions of entries is refused before `zipfile` builds one object per entry), then the central
directory, and refuses the archive when the entry count, the sum of declared sizes, one entry's compression
ratio or the depth of archives nested inside it exceeds `DocumentLimits`. Nested archives are opened as
streams (never extracted) and share the outer archive's budget. `zipfile` never returns more bytes than an
entry declares, and `read_all_capped` (run by the converter process before parsing) streams every entry and
counts the bytes actually inflated, so a lying directory cannot get past the budget either.
"""

from __future__ import annotations

import io
import struct
import zipfile
from dataclasses import dataclass
from typing import IO

from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.docsafe.limits import MB, DocumentLimits, too_large, unreadable

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
RATIO_FLOOR_BYTES = 1 * MB  # small entries may compress well (repetitive XML); only big ones are ratio-checked
CD_BYTES_PER_ENTRY = 300  # a central-directory record is 46 bytes plus name, extra and comment
ARCHIVE_SUFFIXES = (".zip", ".docx", ".docm", ".xlsx", ".xlsm", ".pptx", ".odt", ".ods", ".odp", ".epub", ".jar")
_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_EOCD64 = b"PK\x06\x06"
_CHUNK = 1024 * 1024


def is_zip(head: bytes) -> bool:
    return head.startswith(ZIP_MAGIC)


@dataclass
class ZipSummary:
    entries: int = 0
    uncompressed_bytes: int = 0
    nested_archives: int = 0


def check_zip(source: bytes | IO[bytes], *, name: str, limits: DocumentLimits) -> ZipSummary:
    """Raise `document_too_large` if the archive exceeds a limit, `context_file_unsupported` if it is no zip."""
    handle = io.BytesIO(source) if isinstance(source, bytes) else source
    summary = ZipSummary()
    try:
        _check(handle, name=name, limits=limits, depth=0, summary=summary)
    except FleetError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError, ValueError) as exc:
        raise unreadable("zip archive", name, exc) from exc
    return summary


def _check(handle: IO[bytes], *, name: str, limits: DocumentLimits, depth: int, summary: ZipSummary) -> None:
    entries, cd_size = _directory_bounds(handle)
    if entries > limits.max_entries or cd_size > limits.max_entries * CD_BYTES_PER_ENTRY + 65536:
        raise too_large(name, f"the archive declares {entries} entries", "max_entries", str(limits.max_entries))
    with zipfile.ZipFile(handle) as archive:
        infos = archive.infolist()
        summary.entries += len(infos)
        if summary.entries > limits.max_entries:
            raise too_large(name, f"the archive has {summary.entries} entries", "max_entries", str(limits.max_entries))
        for info in infos:
            _check_entry(info, name=name, limits=limits, summary=summary)
        for info in infos:
            if info.is_dir() or not _is_nested_archive(archive, info):
                continue
            summary.nested_archives += 1
            if depth + 1 > limits.max_nesting:
                raise too_large(
                    name,
                    f"it nests archives more than {limits.max_nesting} deep ({info.filename!r})",
                    "max_nesting",
                    str(limits.max_nesting),
                )
            with archive.open(info) as inner:
                _check(inner, name=name, limits=limits, depth=depth + 1, summary=summary)  # type: ignore[arg-type]


def _check_entry(info: zipfile.ZipInfo, *, name: str, limits: DocumentLimits, summary: ZipSummary) -> None:
    summary.uncompressed_bytes += info.file_size
    if summary.uncompressed_bytes > limits.max_uncompressed_bytes:
        raise too_large(
            name,
            f"it inflates to more than {summary.uncompressed_bytes // MB} MiB",
            "max_uncompressed_bytes",
            f"{limits.max_uncompressed_bytes // MB} MiB",
        )
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size > RATIO_FLOOR_BYTES and ratio > limits.max_compression_ratio:
        raise too_large(
            name,
            f"entry {info.filename!r} inflates {ratio:.0f} times",
            "max_compression_ratio",
            f"{limits.max_compression_ratio:g}x",
        )


def _is_nested_archive(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bool:
    if info.filename.lower().endswith(ARCHIVE_SUFFIXES):
        return True
    if info.file_size < 4:
        return False
    with archive.open(info) as entry:
        return is_zip(entry.read(4))


def _directory_bounds(handle: IO[bytes]) -> tuple[int, int]:
    """(entries, central-directory bytes) from the end record (zip64 when present); (0, 0) if none is found."""
    size = handle.seek(0, io.SEEK_END)
    tail_len = min(size, 22 + 65535)
    handle.seek(size - tail_len)
    tail = handle.read(tail_len)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < 22:
        return 0, 0
    entries, cd_size = struct.unpack("<HI", tail[at + 10 : at + 16])
    locator = tail[at - 20 : at] if at >= 20 else b""
    if locator.startswith(_EOCD64_LOCATOR):
        (offset,) = struct.unpack("<Q", locator[8:16])
        if offset + 56 <= size:
            handle.seek(offset)
            record = handle.read(56)
            if record.startswith(_EOCD64):
                entries, cd_size = struct.unpack("<QQ", record[32:48])
    handle.seek(0)
    return int(entries), int(cd_size)


def read_all_capped(data: bytes, *, name: str, limits: DocumentLimits) -> int:
    """Inflate every entry as a stream, counting real bytes against the budget; returns the total read."""
    total = 0
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                with archive.open(info) as entry:
                    while chunk := entry.read(_CHUNK):
                        total += len(chunk)
                        if total > limits.max_uncompressed_bytes:
                            raise too_large(
                                name,
                                "it inflates to more than the declared sizes allow",
                                "max_uncompressed_bytes",
                                f"{limits.max_uncompressed_bytes // MB} MiB",
                            )
    except FleetError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError, ValueError) as exc:
        raise unreadable("zip archive", name, exc) from exc
    return total
