"""The LM egress client: guarded origins are pinned and never proxied; the operator's own endpoints keep the
environment's proxy (a server that reaches its provider only through a proxy keeps working)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import httpx
import pytest

from fleet_rlm.llm import egress


class _ForwardProxy(http.server.BaseHTTPRequestHandler):
    """A plain-HTTP forward proxy that answers every request itself and remembers the absolute URL it got."""

    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        body = b'{"data": []}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    seen: list[str] = []
    handler = type("Proxy", (_ForwardProxy,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{server.server_address[1]}")
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()


def test_an_operator_endpoint_goes_through_the_environment_proxy(proxy: list[str]) -> None:
    url = "http://operator-llm.invalid:8123/v1/models"  # resolvable only by the proxy
    response = egress.client().get(url)
    assert response.status_code == 200
    assert proxy == [url]


def test_a_guarded_endpoint_is_never_proxied(proxy: list[str]) -> None:
    url = "http://127.0.0.1:8124/v1/models"
    egress.guard_base("http://127.0.0.1:8124/v1")
    with pytest.raises(httpx.ConnectError, match="lm_base_blocked"):
        egress.client().get(url)
    assert proxy == [], "a proxy would resolve and reach the name unchecked"
