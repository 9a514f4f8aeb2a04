"""PDF and DOCX are parsed in a converter process with memory and time limits: what slips past the zip check
kills that process, not this one, and the error says which limit stopped it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context.convert import convert_bytes
from fleet_rlm.runtime.docsafe.limits import (
    DOCUMENT_CONVERT_TIMEOUT,
    DOCUMENT_TOO_LARGE,
    MB,
    DocumentLimits,
)
from fleet_rlm.runtime.docsafe.pool import _BOOT, _SOURCE_ROOT, ConverterPool, shared_pool
from tests.runtime.context.factories import make_docx, make_pdf
from tests.runtime.docsafe import bombs
from tests.runtime.docsafe.conftest import peak_rss, peak_rss_reset

SERVER_GROWTH_MAX = 200 * MB


def _code(data: bytes, name: str, limits: DocumentLimits) -> FleetError:
    with pytest.raises(FleetError) as caught:
        convert_bytes(data, name=name, media_type=None, limits=limits)
    assert "\n" not in caught.value.message and caught.value.action
    return caught.value


def test_ordinary_documents_convert_in_a_reused_worker() -> None:
    pdf = convert_bytes(make_pdf(["alpha page", "beta page"]), name="a.pdf", media_type=None)
    assert pdf.text.startswith("--- page 1 ---\nalpha page") and pdf.info["pages"] == 2
    before = shared_pool().worker_pids()
    docx = convert_bytes(make_docx(), name="a.docx", media_type=None)
    assert "north | 12%" in docx.text and docx.info == {"tables": 1}
    assert shared_pool().worker_pids() == before  # the same warm process answered


def test_a_bomb_past_the_zip_check_hits_the_memory_limit_in_the_child_not_here(docx_bomb: bytes) -> None:
    lax = DocumentLimits(max_uncompressed_bytes=8 * 1024 * MB, max_compression_ratio=1e9, memory_mb=384)
    baseline = peak_rss_reset()
    error = _code(docx_bomb, "bomb.docx", lax)
    assert error.code == DOCUMENT_TOO_LARGE and error.details["limit"] == "memory_mb"
    assert "FLEET_DOCUMENT_CONVERT_MEMORY_MB" in error.message
    assert peak_rss() - baseline < SERVER_GROWTH_MAX
    assert "north" in convert_bytes(make_docx(), name="after.docx", media_type=None).text


def test_a_docx_within_every_zip_limit_but_too_big_to_parse_hits_the_memory_limit(tmp_path: Path) -> None:
    dense = bombs.docx_dense(tmp_path / "dense.docx", 40 * MB).read_bytes()
    baseline = peak_rss_reset()
    error = _code(dense, "dense.docx", DocumentLimits(memory_mb=256))  # the zip limits are the defaults
    assert error.code == DOCUMENT_TOO_LARGE and error.details["limit"] == "memory_mb", error.to_dict()
    assert peak_rss() - baseline < SERVER_GROWTH_MAX


def test_a_conversion_that_runs_too_long_is_stopped_with_a_coded_error() -> None:
    long_pdf = make_pdf([f"page {index} " * 40 for index in range(1500)])
    convert_bytes(make_pdf(["warm"]), name="warm.pdf", media_type=None)  # the limit is on the job, not the start
    error = _code(long_pdf, "long.pdf", DocumentLimits(timeout_s=0.05))
    assert error.code == DOCUMENT_CONVERT_TIMEOUT and "FLEET_DOCUMENT_CONVERT_TIMEOUT_S" in error.message
    assert convert_bytes(make_pdf(["next"]), name="next.pdf", media_type=None).text.endswith("next")


def test_a_pdf_over_the_page_limit_is_refused() -> None:
    error = _code(make_pdf(["a", "b", "c", "d"]), "four.pdf", DocumentLimits(max_pages=3))
    assert error.code == DOCUMENT_TOO_LARGE and error.details["limit"] == "max_pages"


def test_text_over_the_character_limit_is_refused() -> None:
    error = _code(make_pdf(["x" * 500, "y" * 500]), "wordy.pdf", DocumentLimits(max_chars=600))
    assert error.code == DOCUMENT_TOO_LARGE and error.details["limit"] == "max_chars"


def test_a_pdf_with_a_huge_compressed_stream_stays_out_of_this_process() -> None:
    data = bombs.pdf_with_stream(256 * MB)
    baseline = peak_rss_reset()
    try:
        converted = convert_bytes(data, name="stream.pdf", media_type=None, limits=DocumentLimits(memory_mb=384))
        assert converted.info["pages"] == 1
    except FleetError as error:
        assert error.code in {DOCUMENT_TOO_LARGE, "context_file_unsupported"}, error.to_dict()
    assert peak_rss() - baseline < SERVER_GROWTH_MAX


def test_plain_text_formats_never_start_a_worker() -> None:
    pool = shared_pool()
    pool.close()
    for name, data in (("a.txt", b"hello"), ("a.json", b'{"a": 1}'), ("a.csv", b"a,b\n1,2\n"), ("a.py", b"x = 1\n")):
        assert convert_bytes(data, name=name, media_type=None).text
    assert convert_bytes(b"<html><body><p>small page</p></body></html>", name="a.html", media_type=None).text
    assert pool.worker_pids() == []


def test_the_worker_gets_none_of_the_servers_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLEET_JWT_SECRET", "do-not-inherit")
    pool = ConverterPool(max_workers=1)
    try:
        pool.convert("pdf", make_pdf(["x"]), name="x.pdf", limits=DocumentLimits())
        (pid,) = pool.worker_pids()
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert b"do-not-inherit" not in environ and b"FLEET_" not in environ
    finally:
        pool.close()


def test_the_worker_imports_only_its_parsers() -> None:
    assert _BOOT.endswith("from fleet_rlm.runtime.docsafe.worker import main; main()")
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import fleet_rlm.runtime.docsafe.worker"
        + "; [__import__(m) for m in ('pypdf', 'docx', 'bs4', 'markdownify')]"
        + "; heavy = {'dspy', 'litellm', 'pydantic', 'httpx', 'sqlalchemy'}"
        + "; print(sorted({m.split('.')[0] for m in sys.modules} & heavy))"
        + "; ours = [m for m in sys.modules if m.startswith('fleet_rlm.')]"
        + "; print(sorted(m for m in ours if not m.startswith('fleet_rlm.runtime.docsafe')))"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", probe, _SOURCE_ROOT], capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    assert out == ["[]", "['fleet_rlm.errors', 'fleet_rlm.runtime']"]
