"""Zip bombs are refused from the archive directory, in milliseconds, before any parser inflates a byte."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context.convert import check_upload, convert_bytes
from fleet_rlm.runtime.docsafe.limits import DOCUMENT_TOO_LARGE, MB, DocumentLimits
from fleet_rlm.runtime.docsafe.zipguard import check_zip, read_all_capped
from tests.runtime.context.factories import make_docx
from tests.runtime.docsafe import bombs

LIMITS = DocumentLimits()


def _refused(call: object, *args: object, **kwargs: object) -> FleetError:
    with pytest.raises(FleetError) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    assert caught.value.code == DOCUMENT_TOO_LARGE, caught.value.to_dict()
    assert "\n" not in caught.value.message and caught.value.action
    return caught.value


def test_a_docx_that_inflates_to_a_gigabyte_is_refused(docx_bomb: bytes, tmp_path: Path) -> None:
    error = _refused(convert_bytes, docx_bomb, name="report.docx", media_type=None)
    assert error.details["limit"] == "max_uncompressed_bytes"
    assert "FLEET_DOCUMENT_MAX_UNCOMPRESSED_MB" in error.message and "256 MiB" in error.message
    upload = tmp_path / "upload"
    upload.write_bytes(docx_bomb)
    _refused(check_upload, upload, name="report.docx", limits=LIMITS)  # what the upload route runs


def test_a_highly_compressed_entry_is_refused_even_under_the_size_limit(docx_bomb: bytes) -> None:
    roomy = DocumentLimits(max_uncompressed_bytes=8 * 1024 * MB)
    error = _refused(check_zip, docx_bomb, name="report.docx", limits=roomy)
    assert error.details["limit"] == "max_compression_ratio"


def test_an_archive_of_many_entries_is_refused(tmp_path: Path) -> None:
    sheet = bombs.many_entries(tmp_path / "many.xlsx", 10_001)
    error = _refused(convert_bytes, sheet.read_bytes(), name="many.xlsx", media_type=None)
    assert error.details["limit"] == "max_entries"


def test_an_end_record_that_understates_the_entries_does_not_help(tmp_path: Path) -> None:
    data = bytearray(bombs.many_entries(tmp_path / "many.xlsx", 40).read_bytes())
    end = data.rfind(b"PK\x05\x06")
    data[end + 8 : end + 12] = (1).to_bytes(2, "little") * 2  # "1 entry" on this disk and in total
    error = _refused(check_zip, bytes(data), name="many.xlsx", limits=DocumentLimits(max_entries=10))
    assert error.details["limit"] == "max_entries"


def test_archives_nested_too_deep_are_refused_even_when_their_names_hide_it(tmp_path: Path) -> None:
    deep = bombs.nested(tmp_path / "deep.docx", depth=3)
    error = _refused(convert_bytes, deep.read_bytes(), name="deep.docx", media_type=None)
    assert error.details["limit"] == "max_nesting"


def test_a_document_with_an_embedded_archive_still_converts(tmp_path: Path) -> None:
    embedded = bombs.nested(tmp_path / "embedded.docx", depth=1, inner_name="chart.xlsx")
    summary = check_zip(embedded.read_bytes(), name="embedded.docx", limits=LIMITS)
    assert summary.nested_archives == 1
    assert convert_bytes(embedded.read_bytes(), name="embedded.docx", media_type=None).text.strip() == "hi"


def test_an_ordinary_docx_passes_the_check_and_converts() -> None:
    data = make_docx()
    summary = check_zip(data, name="report.docx", limits=LIMITS)
    assert 0 < summary.uncompressed_bytes < MB
    assert "# Quarterly Report" in convert_bytes(data, name="report.docx", media_type=None).text


def test_bytes_actually_inflated_are_counted_while_streaming() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.xml", b"<a/>" * (MB // 2))
    data = out.getvalue()
    assert read_all_capped(data, name="a.zip", limits=LIMITS) == 2 * MB
    error = _refused(read_all_capped, data, name="a.zip", limits=DocumentLimits(max_uncompressed_bytes=MB))
    assert error.details["limit"] == "max_uncompressed_bytes"


def test_a_truncated_archive_is_unreadable_not_a_crash() -> None:
    data = make_docx()
    with pytest.raises(FleetError) as caught:
        check_zip(data[: len(data) // 2], name="cut.docx", limits=LIMITS)
    assert caught.value.code == "context_file_unsupported"
