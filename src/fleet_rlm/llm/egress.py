"""The HTTP client LM calls go out through: pinned to checked addresses, never following redirects.

A profile whose `api_base` must be public (`LMProfile.public_base_only`: a user's own endpoint in token and
oidc modes, unless the operator allows private bases) is checked by name when saved and used, but that proves
nothing about the connection: the name can resolve to loopback a moment later (DNS rebinding) and receive the
request with its key. So such profiles always run on LiteLLM (DSPy's native lm15 engine opens its own sockets
and takes no transport), whose one process-wide sync client is ours: every new connection resolves the host
once, and for a guarded origin (scheme default port or explicit) refuses it unless every answer is public,
then connects to that checked IP (`fleet_rlm.netguard.pinned`). Other origins (the operator's own endpoints)
are pinned the same way but not refused. The model list (`GET {api_base}/models`) uses the same transport.

A guarded origin never goes through a proxy (the proxy would resolve the name itself, unchecked); the
operator's own endpoints still honour the environment's proxy variables (`HTTPS_PROXY`, `NO_PROXY`...), as
LiteLLM's default client did, so a server that reaches its provider only through a proxy keeps working.
Async LiteLLM calls are not made by this project (async LM calls run the sync path in a thread).
"""

from __future__ import annotations

import threading
import urllib.request

import httpx

from fleet_rlm.netguard import GuardCodes
from fleet_rlm.netguard.pinned import pinned_transport

LM_CONNECT_CODES = GuardCodes(
    blocked="lm_base_blocked", failed="lm_base_unresolvable", allow_setting="FLEET_ALLOW_PRIVATE_LM_BASES", what="use"
)

_lock = threading.Lock()
_guarded: set[tuple[str, int]] = set()
_client: httpx.Client | None = None


def _origin(url: str) -> tuple[str, int] | None:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        return None
    if not parsed.host:
        return None
    return parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80)


def guard_base(api_base: str) -> None:
    """From now on, every connection to `api_base`'s host and port must reach only public addresses."""
    origin = _origin(api_base)
    if origin is not None:
        with _lock:
            _guarded.add(origin)


def is_guarded(host: str, port: int) -> bool:
    return (host, port) in _guarded


def _environment_proxy(url: httpx.URL) -> str | None:
    """The proxy the environment names for `url` (stdlib rules: `<scheme>_proxy`, `all_proxy`, `no_proxy`)."""
    proxies = urllib.request.getproxies()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(url.host):
        return None
    return proxy


class EgressTransport(httpx.BaseTransport):
    """Guarded origins: pinned and refused unless public, never proxied. Other origins: the environment's
    proxy when it names one, else pinned (one lookup per connection)."""

    def __init__(self) -> None:
        self._pinned = pinned_transport(guarded=is_guarded, codes=LM_CONNECT_CODES)
        self._proxied: dict[str, httpx.HTTPTransport] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        port = url.port or (443 if url.scheme == "https" else 80)
        proxy = None if is_guarded(url.host, port) else _environment_proxy(url)
        if proxy is None:
            return self._pinned.handle_request(request)
        with _lock:
            transport = self._proxied.get(proxy)
            if transport is None:
                transport = self._proxied[proxy] = httpx.HTTPTransport(proxy=proxy)
        return transport.handle_request(request)

    def close(self) -> None:
        self._pinned.close()
        for transport in self._proxied.values():
            transport.close()


def client() -> httpx.Client:
    """The process-wide client LM calls go out through (no redirects; see the module docstring)."""
    global _client
    with _lock:
        if _client is None:
            _client = httpx.Client(transport=EgressTransport(), follow_redirects=False, trust_env=False)
        return _client


def install_for_litellm() -> None:
    """Make LiteLLM's OpenAI-compatible calls use `client()` (its `client_session`)."""
    import litellm

    shared = client()
    if litellm.client_session is not shared:
        litellm.client_session = shared
