"""The admin role: who may do what affects the whole server (its environment's LM key, every user's programs).

auth_mode=none: the one local user is the admin. token and oidc: users named in `admin_users` (the token's
`sub`), and with oidc also users whose `oidc_admin_claim` equals (or, for a list claim such as `groups`,
contains) `oidc_admin_value`. The principal carries `is_admin`; routes call `require_admin` (or depend on
`AdminUserDep`), which answers 403 `admin_required`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError


def is_admin(settings: Settings, name: str, claims: Mapping[str, Any] | None = None) -> bool:
    """Whether the user called `name` (with these verified token claims) is an admin."""
    if settings.auth_mode == "none":
        return True
    if name in settings.admin_user_names:
        return True
    claim, wanted = settings.oidc_admin_claim, settings.oidc_admin_value
    if settings.auth_mode != "oidc" or not claim or not wanted or claims is None:
        return False
    value = claims.get(claim)
    return value == wanted or (isinstance(value, list | tuple) and wanted in value)


def admin_required(what: str) -> FleetError:
    return FleetError(f"{what} is for admins only", code="admin_required", status=403)
