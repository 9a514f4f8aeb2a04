"""URL sources against a real HTTP server on loopback: conversion, limits, redirects re-checked, SSRF blocks."""

from __future__ import annotations

import ipaddress
import threading
from pathlib import Path

import httpx
import pytest

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context import ContextLimits, LoadedDocument, load_context
from fleet_rlm.runtime.context.fetch import MAX_REDIRECTS, _open, fetch_url
from fleet_rlm.runtime.context.netguard import CheckedTarget
from fleet_rlm.runtime.contracts import CancelToken, ContextSource
from tests.runtime.context.conftest import ctx_of

from .conftest import LoopbackServer, make_settings
from .factories import HTML_PAGE, make_pdf


def _load(url: str, workspace: Path, settings: Settings, limits: ContextLimits | None = None) -> LoadedDocument:
    source = ContextSource(kind="url", url=url)
    return load_context(
        [source], workspace_dir=workspace, context_dir=ctx_of(workspace), settings=settings, limits=limits
    ).documents[0]


def _code(url: str, workspace: Path, settings: Settings, limits: ContextLimits | None = None) -> str:
    with pytest.raises(FleetError) as caught:
        _load(url, workspace, settings, limits)
    assert caught.value.action
    return caught.value.code


def test_html_page_is_fetched_converted_and_written(
    http_server: LoopbackServer, workspace: Path, ctx_settings: Settings
) -> None:
    url = http_server.add("/guide", body=HTML_PAGE, headers={"Content-Type": "text/html; charset=utf-8"})
    doc = _load(url, workspace, ctx_settings)
    assert (doc.kind, doc.name, doc.media_type) == ("url", url, "text/html")
    assert "# Getting started" in doc.text and "do-not-show" not in doc.text
    assert doc.info["http_status"] == 200 and doc.info["url"] == url
    assert doc.file.read_text(encoding="utf-8") == doc.text
    assert http_server.hosts == [f"127.0.0.1:{http_server.port}"]


def test_pdf_and_plain_text_by_content_type(
    http_server: LoopbackServer, workspace: Path, ctx_settings: Settings
) -> None:
    pdf = _load(
        http_server.add("/file", body=make_pdf(["remote pdf"]), headers={"Content-Type": "application/pdf"}),
        workspace,
        ctx_settings,
    )
    assert pdf.media_type == "application/pdf" and "remote pdf" in pdf.text
    text = _load(
        http_server.add("/t", body=b"just text", headers={"Content-Type": "text/plain"}), workspace, ctx_settings
    )
    assert text.text == "just text"


def test_hostname_is_sent_as_host_header(http_server: LoopbackServer, workspace: Path, ctx_settings: Settings) -> None:
    http_server.add("/named", body=b"ok", headers={"Content-Type": "text/plain"})
    doc = _load(http_server.url("/named", host="localhost"), workspace, ctx_settings)
    assert doc.text == "ok"
    assert http_server.hosts == [f"localhost:{http_server.port}"]


def test_redirects_are_followed(http_server: LoopbackServer, workspace: Path, ctx_settings: Settings) -> None:
    http_server.add("/final", body=b"landed", headers={"Content-Type": "text/plain"})
    url = http_server.add("/start", status=302, headers={"Location": "/final"})
    doc = _load(url, workspace, ctx_settings)
    assert doc.text == "landed"
    assert doc.info["final_url"] == http_server.url("/final") and doc.info["redirects"] == 1


def test_redirect_loops_fail(http_server: LoopbackServer, workspace: Path, ctx_settings: Settings) -> None:
    url = http_server.add("/loop", status=301, headers={"Location": "/loop"})
    assert _code(url, workspace, ctx_settings) == "context_url_failed"
    assert len(http_server.hosts) == MAX_REDIRECTS + 1


def test_redirect_to_a_private_address_is_blocked(http_server: LoopbackServer) -> None:
    """127.0.0.1 plays a public host here; its redirect to 127.0.0.2 must be re-checked and refused."""
    only_first = lambda ip: ip == ipaddress.ip_address("127.0.0.1")  # noqa: E731
    http_server.add("/ok", body=b"fine", headers={"Content-Type": "text/plain"})
    assert (
        fetch_url(
            http_server.url("/ok"), allow_private=False, max_bytes=100, timeout_s=10, address_allowed=only_first
        ).data
        == b"fine"
    )

    target = f"http://127.0.0.2:{http_server.port}/ok"
    url = http_server.add("/hop", status=302, headers={"Location": target})
    with pytest.raises(FleetError) as caught:
        fetch_url(url, allow_private=False, max_bytes=100, timeout_s=10, address_allowed=only_first)
    assert caught.value.code == "context_url_blocked"
    assert caught.value.details["address"] == "127.0.0.2"


def test_redirect_to_another_scheme_is_blocked(
    http_server: LoopbackServer, workspace: Path, ctx_settings: Settings
) -> None:
    url = http_server.add("/tofile", status=302, headers={"Location": "file:///etc/passwd"})
    assert _code(url, workspace, ctx_settings) == "context_url_blocked"


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_loopback_is_blocked_by_default(
    http_server: LoopbackServer, workspace: Path, tmp_path: Path, host: str
) -> None:
    url = http_server.add("/secret", body=b"internal")
    assert _code(http_server.url("/secret", host=host), workspace, make_settings(tmp_path)) == "context_url_blocked"
    assert url and http_server.hosts == []  # refused before connecting


def test_declared_length_over_limit(http_server: LoopbackServer, workspace: Path, tmp_path: Path) -> None:
    url = http_server.add("/big", body=b"x" * 2000)
    settings = make_settings(tmp_path, url_allow_private=True, url_max_bytes=1000)
    assert _code(url, workspace, settings) == "context_url_too_large"


def test_streamed_body_over_limit_without_length(http_server: LoopbackServer, workspace: Path, tmp_path: Path) -> None:
    url = http_server.add("/stream", body=b"y" * 500, drip=(10, 0.0), headers={"Content-Type": "text/plain"})
    settings = make_settings(tmp_path, url_allow_private=True, url_max_bytes=2000)
    assert _code(url, workspace, settings) == "context_url_too_large"
    ok = make_settings(tmp_path, url_allow_private=True, url_max_bytes=5000)
    assert _load(url, workspace, ok).chars == 5000


def test_http_errors_fail_with_status(http_server: LoopbackServer, workspace: Path, ctx_settings: Settings) -> None:
    with pytest.raises(FleetError) as caught:
        _load(http_server.url("/missing"), workspace, ctx_settings)
    assert caught.value.code == "context_url_failed"
    assert caught.value.details["http_status"] == 404


def test_slow_server_times_out(http_server: LoopbackServer, workspace: Path, ctx_settings: Settings) -> None:
    url = http_server.add("/slow", body=b"z", drip=(20, 0.2))
    assert _code(url, workspace, ctx_settings, ContextLimits(url_timeout_s=0.5)) == "context_url_failed"


def test_connection_refused_fails(workspace: Path, ctx_settings: Settings) -> None:
    assert _code("http://127.0.0.1:9/", workspace, ctx_settings) == "context_url_failed"


def test_cancel_stops_a_download(http_server: LoopbackServer, workspace: Path, ctx_settings: Settings) -> None:
    url = http_server.add("/long", body=b"w" * 100, drip=(100, 0.05))
    cancel = CancelToken()
    timer = threading.Timer(0.3, cancel.cancel)
    timer.start()
    try:
        with pytest.raises(FleetError) as caught:
            load_context(
                [ContextSource(kind="url", url=url)],
                workspace_dir=workspace,
                context_dir=ctx_of(workspace),
                settings=ctx_settings,
                cancel=cancel,
            )
    finally:
        timer.cancel()
    assert caught.value.code == "context_cancelled"


def test_image_urls_are_unsupported(http_server: LoopbackServer, workspace: Path, ctx_settings: Settings) -> None:
    url = http_server.add("/img", body=b"\x89PNG\r\n\x1a\n\x00", headers={"Content-Type": "image/png"})
    assert _code(url, workspace, ctx_settings) == "context_file_unsupported"


def test_next_checked_address_is_tried_when_one_refuses(http_server: LoopbackServer) -> None:
    """A host with several addresses (often IPv6 first) falls back to the next one it was checked for."""
    url = http_server.add("/multi", body=b"reached", headers={"Content-Type": "text/plain"})
    target = CheckedTarget(httpx.URL(url), "127.0.0.1", http_server.port, ("127.0.0.2", "127.0.0.1"))
    with httpx.Client(trust_env=False) as client:
        response = _open(client, target)
        try:
            assert response.read() == b"reached"
        finally:
            response.close()
