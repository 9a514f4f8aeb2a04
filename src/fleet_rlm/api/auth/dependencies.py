"""The dependencies routes use to learn who is calling.

HTTP routes take `CurrentUserDep` (bearer token, or the local user when auth_mode=none). WebSocket and SSE
routes take `TicketUserDep`: a single-use `?ticket=` (a raw JWT never travels in a URL); with auth_mode=none
the ticket is optional because there is only the local user.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.requests import HTTPConnection

from fleet_rlm.api.auth.admin import is_admin
from fleet_rlm.api.auth.oidc import OidcVerifier
from fleet_rlm.api.auth.principal import (
    LOCAL_USER,
    Principal,
    check_user_name,
    principal_for_name,
    principal_for_user_id,
    require_admin,
)
from fleet_rlm.api.auth.tickets import consume_ticket
from fleet_rlm.api.auth.tokens import unauthorized, verify_token
from fleet_rlm.config import Settings
from fleet_rlm.store import Database

bearer_scheme = HTTPBearer(
    auto_error=False,
    description="auth_mode=token: an HS256 JWT from `fleet-rlm auth token`; auth_mode=oidc: the provider's JWT.",
)


def _state(conn: HTTPConnection) -> tuple[Settings, Database]:
    return conn.app.state.settings, conn.app.state.database


def oidc_verifier(conn: HTTPConnection, settings: Settings) -> OidcVerifier:
    """One verifier (and JWKS cache) per app, built on first use."""
    verifier: OidcVerifier | None = getattr(conn.app.state, "oidc_verifier", None)
    if verifier is None:
        verifier = OidcVerifier(settings)
        conn.app.state.oidc_verifier = verifier
    return verifier


async def verify_bearer(conn: HTTPConnection, settings: Settings, token: str) -> dict[str, Any]:
    """The claims of a bearer token under the configured auth mode (token or oidc)."""
    if settings.auth_mode == "oidc":
        return await oidc_verifier(conn, settings).verify(token)
    return verify_token(settings, token)


async def current_user(
    conn: HTTPConnection,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)],
) -> Principal:
    """The caller of an HTTP route; 401 `unauthorized` without a valid bearer token (unless auth_mode=none)."""
    settings, db = _state(conn)
    if settings.auth_mode == "none":
        return await principal_for_name(db, settings, LOCAL_USER, is_admin=True)
    if credentials is None or not credentials.credentials:
        raise unauthorized("this server requires a bearer token")
    claims = await verify_bearer(conn, settings, credentials.credentials)
    name = check_user_name(claims.get("sub"))
    display = claims.get("name") or claims.get("preferred_username")
    return await principal_for_name(
        db,
        settings,
        name,
        display_name=display if isinstance(display, str) else None,
        is_admin=is_admin(settings, name, claims),
    )


async def ticket_user(conn: HTTPConnection) -> Principal:
    """The caller of a WebSocket/SSE route, from a single-use `?ticket=` (burned on use)."""
    settings, db = _state(conn)
    ticket = conn.query_params.get("ticket")
    if settings.auth_mode == "none" and not ticket:
        return await principal_for_name(db, settings, LOCAL_USER, is_admin=True)
    user = await consume_ticket(db, ticket or "")
    principal = await principal_for_user_id(db, settings, user.id)
    if principal is None:  # pragma: no cover - the user was deleted between the two reads
        raise unauthorized("the ticket's user no longer exists")
    return principal


async def admin_user(principal: Annotated[Principal, Depends(current_user)]) -> Principal:
    """The caller of an operator-level route; 403 `admin_required` unless they are an admin."""
    require_admin(principal, "this action")
    return principal


CurrentUserDep = Annotated[Principal, Depends(current_user)]
TicketUserDep = Annotated[Principal, Depends(ticket_user)]
AdminUserDep = Annotated[Principal, Depends(admin_user)]
