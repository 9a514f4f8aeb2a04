"""SSRF guard: a URL may be reached only if every address its host resolves to is public.

One guard for every outbound URL a user can choose (context URLs and repositories in the runtime, LLM profile
`api_base`s and MCP server URLs), so it lives below both: a leaf that imports only errors. Callers name their
own stable codes (`GuardCodes`). A check by name alone proves nothing about the later connection (the name can
resolve elsewhere a moment later: DNS rebinding), so every connection is made to an address that was checked:
the context fetcher and git connect to the addresses `check_url` returned, and HTTP clients use the pinned
transports of `fleet_rlm.netguard.pinned`, which resolve once per connection, check, and connect to that IP.
Every lookup goes through `resolve`, whose resolver a test can replace (`use_resolver`).
IPv4-mapped, 6to4, Teredo and NAT64 IPv6 forms are judged by the IPv4 address they carry; decimal and octal
IPv4 spellings (`2130706433`, `0177.0.0.1`) resolve to the address they mean and are judged by it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import httpx

from fleet_rlm.errors import FleetError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
AddressPolicy = Callable[[IPAddress], bool]
Resolver = Callable[[str, int], Sequence[str]]
"""(host, port) -> the addresses it resolves to, in order; raises OSError (socket.gaierror) when it cannot."""
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
ALLOWED_SCHEMES = ("http", "https")


@dataclass(frozen=True)
class GuardCodes:
    """The caller's stable error codes and the setting an operator can change to allow private targets."""

    blocked: str = "url_blocked"
    failed: str = "url_failed"
    allow_setting: str = "url_allow_private"
    what: str = "load"


def _error(code: str, message: str, action: str, *, status: int = 422, **details: object) -> FleetError:
    return FleetError(message, code=code, action=action, status=status, details=details or None)


@dataclass(frozen=True)
class CheckedTarget:
    url: httpx.URL
    host: str
    port: int
    addresses: tuple[str, ...]


def is_public_address(ip: IPAddress) -> bool:
    """True for globally routable unicast addresses; loopback, private, link-local, CGNAT, multicast are not."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            return is_public_address(embedded)
    return ip.is_global and not ip.is_multicast and not ip.is_reserved and not ip.is_unspecified


def system_resolver(host: str, port: int) -> tuple[str, ...]:
    """The operating system's answer (getaddrinfo), scope ids dropped, duplicates removed."""
    seen: dict[str, None] = {}
    for _family, _type, _proto, _canon, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        seen.setdefault(str(ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])), None)
    return tuple(seen)


_resolver: Resolver = system_resolver
_also_public: frozenset[str] = frozenset()


@contextlib.contextmanager
def use_resolver(resolver: Resolver, *, also_public: Iterable[str] = ()) -> Iterator[None]:
    """Answer every host-name lookup of the guard and the pinned transports with `resolver` while the block
    runs, and judge the `also_public` addresses public (tests put a loopback alias such as 127.0.0.2 there to
    stand for a public host: nothing in a test may connect to a real public address). Process-wide."""
    global _resolver, _also_public
    saved = _resolver, _also_public
    _resolver, _also_public = resolver, frozenset(also_public)
    try:
        yield
    finally:
        _resolver, _also_public = saved


def _literal(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host.strip("[]").split("%", 1)[0]))
    except ValueError:
        return None


def resolve(host: str, port: int, codes: GuardCodes = GuardCodes()) -> tuple[str, ...]:
    """Every address `host` resolves to (IP literals resolve to themselves), in resolver order."""
    literal = _literal(host)
    if literal is not None:
        return (literal,)
    try:
        answer = _resolver(host, port)
        return tuple(dict.fromkeys(str(ipaddress.ip_address(address)) for address in answer))
    except (socket.gaierror, UnicodeError, OSError, ValueError) as exc:
        raise _error(
            codes.failed,
            f"cannot resolve host {host!r}: {exc}",
            "check the URL's host name",
            status=502,
            host=host,
        ) from exc


def checked_addresses(
    host: str,
    port: int,
    *,
    allow_private: bool,
    address_allowed: AddressPolicy | None = None,
    codes: GuardCodes = GuardCodes(),
) -> tuple[str, ...]:
    """Resolve `host` once and vet every answer: the addresses a connection may go to, in order.

    Raises `codes.failed` (502) when it does not resolve and `codes.blocked` (403) when any answer is not
    public (unless `allow_private`). `address_allowed` replaces the public-address rule (tests)."""
    addresses = resolve(host, port, codes)
    if not addresses:
        raise _error(codes.failed, f"host {host!r} has no address", "check the URL", status=502)
    if not allow_private:
        allowed = address_allowed or _public
        for address in addresses:
            if not allowed(ipaddress.ip_address(address)):
                raise _error(
                    codes.blocked,
                    f"{host} resolves to {address}, a private, loopback or link-local address",
                    f"{codes.what} only public URLs (an administrator can set {codes.allow_setting})",
                    status=403,
                    host=host,
                    address=address,
                )
    return addresses


def _public(ip: IPAddress) -> bool:
    return str(ip) in _also_public or is_public_address(ip)


def check_url(
    url: str | httpx.URL,
    *,
    allow_private: bool,
    address_allowed: AddressPolicy | None = None,
    codes: GuardCodes = GuardCodes(),
) -> CheckedTarget:
    """Parse, resolve and vet `url`; raises `codes.blocked` (403) for non-public targets or other schemes.

    `address_allowed` replaces `is_public_address` as the rule (tests use it to treat one loopback address as
    public); `allow_private` skips the address rule altogether.
    """
    try:
        parsed = httpx.URL(str(url))
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise _error(codes.blocked, f"invalid URL {str(url)[:200]!r}", "give an http(s) URL", status=403) from exc
    if parsed.scheme not in ALLOWED_SCHEMES or not parsed.host:
        raise _error(
            codes.blocked,
            f"only http and https URLs can be used, not {str(url)[:200]!r}",
            "give an http(s) URL",
            status=403,  # one status per code: a refused target is 403 whatever the reason
            url=str(url)[:500],
        )
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    addresses = checked_addresses(
        parsed.host, port, allow_private=allow_private, address_allowed=address_allowed, codes=codes
    )
    return CheckedTarget(url=parsed, host=parsed.host, port=port, addresses=addresses)
