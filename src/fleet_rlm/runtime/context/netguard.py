"""The SSRF guard (`fleet_rlm.netguard`) with context loading's stable codes."""

from __future__ import annotations

import httpx

from fleet_rlm import netguard
from fleet_rlm.netguard import AddressPolicy, CheckedTarget, IPAddress, is_public_address
from fleet_rlm.runtime.context.failures import URL_BLOCKED, URL_FAILED

CONTEXT_CODES = netguard.GuardCodes(blocked=URL_BLOCKED, failed=URL_FAILED, allow_setting="url_allow_private")

__all__ = ["AddressPolicy", "CheckedTarget", "IPAddress", "check_url", "is_public_address"]


def check_url(
    url: str | httpx.URL, *, allow_private: bool, address_allowed: AddressPolicy | None = None
) -> CheckedTarget:
    """`netguard.check_url` raising `context_url_blocked` / `context_url_failed`."""
    return netguard.check_url(url, allow_private=allow_private, address_allowed=address_allowed, codes=CONTEXT_CODES)
