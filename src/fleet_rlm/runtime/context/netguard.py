"""SSRF guard: a URL may be fetched only if every address its host resolves to is public.

The fetcher then connects to one of exactly these checked addresses (never resolving the name again), so a
DNS answer that changes between check and connect (rebinding) cannot reach a private address. IPv4-mapped,
6to4, Teredo and NAT64 IPv6 forms are judged by the IPv4 address they carry.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from fleet_rlm.runtime.context.failures import URL_BLOCKED, URL_FAILED, context_error

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
AddressPolicy = Callable[[IPAddress], bool]
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
ALLOWED_SCHEMES = ("http", "https")


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


def resolve(host: str, port: int) -> tuple[str, ...]:
    """Every address `host` resolves to (IP literals resolve to themselves), in resolver order."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise context_error(
            URL_FAILED,
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
    url: str | httpx.URL, *, allow_private: bool, address_allowed: AddressPolicy | None = None
) -> CheckedTarget:
    """Parse, resolve and vet `url`; raises `context_url_blocked` for non-public targets or other schemes.

    `address_allowed` replaces `is_public_address` as the rule (tests use it to treat one loopback address as
    public); `allow_private` skips the address rule altogether.
    """
    try:
        parsed = httpx.URL(str(url))
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise context_error(URL_BLOCKED, f"invalid URL {str(url)[:200]!r}", "give an http(s) URL") from exc
    if parsed.scheme not in ALLOWED_SCHEMES or not parsed.host:
        raise context_error(
            URL_BLOCKED,
            f"only http and https URLs can be loaded, not {str(url)[:200]!r}",
            "give an http(s) URL, or upload the file instead",
            url=str(url)[:500],
        )
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    addresses = resolve(parsed.host, port)
    if not addresses:
        raise context_error(URL_FAILED, f"host {parsed.host!r} has no address", "check the URL", status=502)
    if not allow_private:
        allowed = address_allowed or is_public_address
        for address in addresses:
            if not allowed(ipaddress.ip_address(address)):
                raise context_error(
                    URL_BLOCKED,
                    f"{parsed.host} resolves to {address}, a private, loopback or link-local address",
                    "load only public URLs (an administrator can set url_allow_private)",
                    status=403,
                    host=parsed.host,
                    address=address,
                )
    return CheckedTarget(url=parsed, host=parsed.host, port=port, addresses=addresses)
