"""The SSRF guard: which addresses count as public, and URLs refused before any connection is made."""

from __future__ import annotations

import ipaddress

import pytest

from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context.netguard import check_url, is_public_address


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.8.9.10",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "255.255.255.255",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "2002:7f00:1::",
        "64:ff9b::a00:1",
    ],
)
def test_private_and_special_addresses_are_not_public(address: str) -> None:
    assert not is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_global_unicast_addresses_are_public(address: str) -> None:
    assert is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://localhost:8080/admin",
        "http://10.0.0.5/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "https://0x7f000001/",
        "http://2130706433/",
        "http://0/",
    ],
)
def test_urls_reaching_private_addresses_are_blocked(url: str) -> None:
    with pytest.raises(FleetError) as caught:
        check_url(url, allow_private=False)
    assert (caught.value.code, caught.value.status) == ("context_url_blocked", 403)
    assert "FLEET_URL_ALLOW_PRIVATE=true" in (caught.value.action or "")


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.org/x", "gopher://127.0.0.1/", "http:///nohost"])
def test_other_schemes_are_blocked_even_when_private_is_allowed(url: str) -> None:
    with pytest.raises(FleetError) as caught:
        check_url(url, allow_private=True)
    assert caught.value.code == "context_url_blocked"


def test_allow_private_lets_loopback_through() -> None:
    target = check_url("http://localhost:9/x", allow_private=True)
    assert target.host == "localhost" and target.port == 9
    assert "127.0.0.1" in target.addresses


def test_unresolvable_host_fails() -> None:
    with pytest.raises(FleetError) as caught:
        check_url("http://no-such-host.invalid/", allow_private=False)
    assert caught.value.code == "context_url_failed"
