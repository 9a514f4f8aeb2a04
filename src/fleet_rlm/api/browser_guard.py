"""Browser protections in one pure ASGI middleware: `Host` and `Origin` checks, security headers.

A browser is the one client another web site can drive. Two attacks matter, in every auth mode (auth `none`
on a laptop most of all): DNS rebinding, where the attacker's name resolves to 127.0.0.1 so requests carry
`Host: evil.example`; and cross-site requests, where a foreign page POSTs or opens a WebSocket to the server
(the browser then sends `Origin: https://evil.example`, or `Origin: null` from sandboxed frames and files).

So every HTTP request and WebSocket upgrade must name an allowed `Host`: the loopback names, the configured
`host`, the address the connection arrived on, and `FLEET_ALLOWED_HOSTS`. WebSocket upgrades and
POST/PUT/PATCH/DELETE that carry an `Origin` must come from the server's own origin (the same host and port
the request was sent to, or a loopback alias of the served port) or from `FLEET_ALLOWED_ORIGINS`. A request
without `Origin` is a non-browser client (the CLI, curl) unless `Sec-Fetch-Site: cross-site` says otherwise.
Refusals are `403 origin_not_allowed` / `421 host_not_allowed`, or on a WebSocket an `error` frame and close
code 4403 / 4421 with the code as reason. Every HTTP response also gets the security headers below.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fleet_rlm.api.errors import error_body
from fleet_rlm.config import Settings, split_list

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARD_BINDS = frozenset({"", "0.0.0.0", "::"})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
DEFAULT_PORTS = {"http": 80, "https": 443}

CSP = (
    "default-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'; object-src 'none'"
)
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)
# FastAPI's interactive API docs load their script from a CDN and run an inline one: no CSP there.
NO_CSP_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc"})

ORIGIN_CLOSE = 4403
HOST_CLOSE = 4421


@dataclass(frozen=True)
class Refusal:
    status: int
    close_code: int
    code: str
    message: str
    action: str


def origin_refusal(origin: str) -> Refusal:
    return Refusal(
        403,
        ORIGIN_CLOSE,
        "origin_not_allowed",
        f"requests from the web origin {origin[:200]!r} are not allowed",
        "open the app at the server's own address, or add the origin to FLEET_ALLOWED_ORIGINS",
    )


def host_refusal(host: str) -> Refusal:
    return Refusal(
        421,
        HOST_CLOSE,
        "host_not_allowed",
        f"this server does not answer to the host name {host[:200]!r}",
        "use the server's address (e.g. 127.0.0.1), or add the name to FLEET_ALLOWED_HOSTS",
    )


def split_host(value: str) -> tuple[str, int | None] | None:
    """`name[:port]` or `[v6]:port` -> (lowercase name without trailing dot, port); None when malformed."""
    text = value.strip().lower()
    port_text = ""
    if text.startswith("["):
        name, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:]
    else:
        if text.count(":") > 1:
            return None
        name, _, port_text = text.partition(":")
    name = name.rstrip(".")
    if not name or (port_text and not port_text.isdigit()):
        return None
    return name, int(port_text) if port_text else None


def split_origin(origin: str) -> tuple[str, str, int] | None:
    """`scheme://host[:port]` -> (scheme, host, port with the scheme's default); None for `null` or junk."""
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in DEFAULT_PORTS or "/" in rest or "@" in rest:
        return None
    host = split_host(rest)
    if host is None:
        return None
    return scheme, host[0], host[1] if host[1] is not None else DEFAULT_PORTS[scheme]


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


class BrowserGuard:
    """Refuses foreign `Host`s and cross-site origins before the app runs; adds the security headers."""

    def __init__(self, app: ASGIApp, *, settings: Settings) -> None:
        self.app = app
        extra_hosts = split_list(settings.allowed_hosts)
        self.any_host = "*" in extra_hosts
        names = {settings.host.strip("[]").lower()} - WILDCARD_BINDS
        for entry in extra_hosts:
            parsed = split_host(entry)
            if parsed is not None:
                names.add(parsed[0])
        self.hosts = LOOPBACK_HOSTS | names
        self.origins = {o for o in map(split_origin, split_list(settings.allowed_origins)) if o is not None}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal = self.check(scope)
        if refusal is not None:
            if scope["type"] == "websocket":
                await _refuse_socket(receive, send, refusal)
            else:
                await _refuse_http(send, refusal)
            return
        if scope["type"] == "http":
            await self.app(scope, receive, _with_headers(send, scope.get("path", "")))
        else:
            await self.app(scope, receive, send)

    def check(self, scope: Scope) -> Refusal | None:
        """Why this request is refused, or None."""
        host_header = _header(scope, b"host")
        host = split_host(host_header) if host_header is not None else None
        if host_header is not None and not self.host_allowed(scope, host):
            return host_refusal(host_header)
        if scope["type"] == "http" and scope.get("method", "GET") not in UNSAFE_METHODS:
            return None
        origin = _header(scope, b"origin")
        if origin is None:
            if (_header(scope, b"sec-fetch-site") or "").strip().lower() == "cross-site":
                return origin_refusal("cross-site (Sec-Fetch-Site)")
            return None
        return None if self.origin_allowed(scope, origin, host) else origin_refusal(origin)

    def host_allowed(self, scope: Scope, host: tuple[str, int | None] | None) -> bool:
        if host is None:
            return False
        if self.any_host or host[0] in self.hosts:
            return True
        server = scope.get("server")
        return server is not None and str(server[0]).lower() == host[0]

    def origin_allowed(self, scope: Scope, origin: str, host: tuple[str, int | None] | None) -> bool:
        parsed = split_origin(origin)
        if parsed is None:
            return False
        if parsed in self.origins:
            return True
        _, name, port = parsed
        if host is not None and name == host[0]:
            # the page and this request name the same host and port: the server's own origin (also behind a
            # TLS proxy, where the request arrives as plain http but the page is https)
            if host[1] is None or host[1] in DEFAULT_PORTS.values():
                return port in DEFAULT_PORTS.values()
            return port == host[1]
        server = scope.get("server")
        return name in LOOPBACK_HOSTS and server is not None and server[1] == port


def _with_headers(send: Send, path: str) -> Send:
    extra = list(SECURITY_HEADERS)
    if path not in NO_CSP_PATHS:
        extra.append((b"content-security-policy", CSP.encode()))

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            present = {bytes(key).lower() for key, _ in headers}
            headers.extend((key, value) for key, value in extra if key not in present)
            message = {**message, "headers": headers}
        await send(message)

    return sending


async def _refuse_http(send: Send, refusal: Refusal) -> None:
    body = json.dumps(error_body(refusal.code, refusal.message, refusal.action)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers + list(SECURITY_HEADERS)})
    await send({"type": "http.response.body", "body": body})


async def _refuse_socket(receive: Receive, send: Send, refusal: Refusal) -> None:
    """Accept only to say why: an `error` frame, then a close whose code and reason name the refusal."""
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    frame = {"type": "error", "code": refusal.code, "message": refusal.message, "action": refusal.action}
    await send({"type": "websocket.accept"})
    await send({"type": "websocket.send", "text": json.dumps(frame)})
    await send({"type": "websocket.close", "code": refusal.close_code, "reason": refusal.code})
