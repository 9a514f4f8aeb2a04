"""The SSRF guard (`fleet_rlm.netguard`) with context loading's stable codes."""

from __future__ import annotations

import httpx

from fleet_rlm import netguard
from fleet_rlm.errors import ALLOW_PRIVATE_URLS
from fleet_rlm.netguard import AddressPolicy, CheckedTarget, IPAddress, is_public_address
from fleet_rlm.runtime.context.failures import REPO_BLOCKED, REPO_FAILED, URL_BLOCKED, URL_FAILED

CONTEXT_CODES = netguard.GuardCodes(blocked=URL_BLOCKED, failed=URL_FAILED, allow_setting=ALLOW_PRIVATE_URLS)
REPO_CODES = netguard.GuardCodes(
    blocked=REPO_BLOCKED, failed=REPO_FAILED, allow_setting=ALLOW_PRIVATE_URLS, what="clone"
)

__all__ = ["AddressPolicy", "CheckedTarget", "IPAddress", "check_url", "is_public_address"]


def check_url(
    url: str | httpx.URL,
    *,
    allow_private: bool,
    address_allowed: AddressPolicy | None = None,
    codes: netguard.GuardCodes = CONTEXT_CODES,
) -> CheckedTarget:
    """`netguard.check_url` raising `context_url_blocked` / `context_url_failed` (repositories: REPO_CODES)."""
    return netguard.check_url(url, allow_private=allow_private, address_allowed=address_allowed, codes=codes)
