"""SSRF guard: a URL may be reached only if every address its host resolves to is public.

One guard for every outbound URL a user can choose (context URLs and repositories in the runtime, LLM profile
`api_base`s in llm), so it lives below both: a leaf that imports only errors. Callers name their own stable
codes (`GuardCodes`). The context fetcher connects to one of exactly these checked addresses (never resolving
the name again), so a DNS answer that changes between check and connect cannot reach a private address.
IPv4-mapped, 6to4, Teredo and NAT64 IPv6 forms are judged by the IPv4 address they carry; decimal and octal
IPv4 spellings (`2130706433`, `0177.0.0.1`) resolve to the address they mean and are judged by it.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from fleet_rlm.errors import FleetError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
AddressPolicy = Callable[[IPAddress], bool]
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


def resolve(host: str, port: int, codes: GuardCodes = GuardCodes()) -> tuple[str, ...]:
    """Every address `host` resolves to (IP literals resolve to themselves), in resolver order."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise _error(
            codes.failed,
            f"cannot resolve host {host!r}: {exc}",
            "check the URL's host name",
            status=502,
            host=host,
        ) from exc
    seen: dict[str, None] = {}
    for _family, _type, _proto, _canon, sockaddr in infos:
        seen.setdefault(str(ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])), None)
    return tuple(seen)


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
        raise _error(codes.blocked, f"invalid URL {str(url)[:200]!r}", "give an http(s) URL") from exc
    if parsed.scheme not in ALLOWED_SCHEMES or not parsed.host:
        raise _error(
            codes.blocked,
            f"only http and https URLs can be used, not {str(url)[:200]!r}",
            "give an http(s) URL",
            url=str(url)[:500],
        )
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    addresses = resolve(parsed.host, port, codes)
    if not addresses:
        raise _error(codes.failed, f"host {parsed.host!r} has no address", "check the URL", status=502)
    if not allow_private:
        allowed = address_allowed or is_public_address
        for address in addresses:
            if not allowed(ipaddress.ip_address(address)):
                raise _error(
                    codes.blocked,
                    f"{parsed.host} resolves to {address}, a private, loopback or link-local address",
                    f"{codes.what} only public URLs (an administrator can set {codes.allow_setting})",
                    status=403,
                    host=parsed.host,
                    address=address,
                )
    return CheckedTarget(url=parsed, host=parsed.host, port=port, addresses=addresses)
