"""Which `api_base` a user's profile may point at: the SSRF rule for LLM endpoints.

In token and oidc modes a profile's base URL must resolve only to public addresses (no loopback, private,
link-local, CGNAT or unspecified address, in any spelling), unless the operator sets
`allow_private_lm_bases`; with auth_mode=none (one local user, e.g. a laptop talking to Ollama) anything goes.
The rule is applied when a profile is saved and again before every use (a name can resolve elsewhere later).
Profiles that use the server's own environment (`DSPY_LM_*`) are the operator's choice and are not checked.
"""

from __future__ import annotations

from fleet_rlm import netguard
from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError

LM_BASE_BLOCKED = "lm_base_blocked"
LM_BASE_CODES = netguard.GuardCodes(
    blocked=LM_BASE_BLOCKED,
    failed="lm_base_unresolvable",
    allow_setting="FLEET_ALLOW_PRIVATE_LM_BASES",
    what="use",
)


def private_bases_allowed(settings: Settings) -> bool:
    return settings.auth_mode == "none" or settings.allow_private_lm_bases


def check_api_base(api_base: str | None, settings: Settings) -> None:
    """Raise `lm_base_blocked` (403) when `api_base` may not be used under these settings; None is fine.

    A name that does not resolve passes (nothing can be reached through it; the call itself will fail)."""
    if not api_base or private_bases_allowed(settings):
        return
    try:
        netguard.check_url(api_base, allow_private=False, codes=LM_BASE_CODES)
    except FleetError as exc:
        if exc.code != LM_BASE_CODES.failed:
            raise
