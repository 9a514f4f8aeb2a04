"""Authentication and per-user isolation for every route.

Modes (settings.auth_mode): `none` (one local user, loopback only), `token` (HS256 JWT signed with
FLEET_JWT_SECRET, minted by `mint_token`), `oidc` (provider JWTs checked against JWKS, issuer, audience).
Routes depend on `CurrentUserDep` (HTTP) or `TicketUserDep` (WebSocket/SSE with `?ticket=`) and receive a
`Principal`; every lookup is scoped by `principal.user_id`, so another user's row is simply "not found".
"""

from fleet_rlm.api.auth.admin import admin_required, is_admin
from fleet_rlm.api.auth.dependencies import AdminUserDep, CurrentUserDep, TicketUserDep, current_user, ticket_user
from fleet_rlm.api.auth.principal import LOCAL_USER, Principal, principal_for_name, principal_for_user_id, require_admin
from fleet_rlm.api.auth.tickets import MAX_TTL_S, consume_ticket, issue_ticket
from fleet_rlm.api.auth.tokens import DEFAULT_TTL_S, mint_token, unauthorized, verify_token

__all__ = [
    "DEFAULT_TTL_S",
    "LOCAL_USER",
    "MAX_TTL_S",
    "AdminUserDep",
    "CurrentUserDep",
    "Principal",
    "TicketUserDep",
    "admin_required",
    "consume_ticket",
    "current_user",
    "is_admin",
    "issue_ticket",
    "mint_token",
    "principal_for_name",
    "principal_for_user_id",
    "require_admin",
    "ticket_user",
    "unauthorized",
    "verify_token",
]
