"""Bearer tokens: HS256 JWTs for auth_mode=token (minted here), and the 401 every auth failure becomes.

`mint_token` is what `fleet-rlm auth token --user NAME` will call. Tokens carry `sub` (the user name), `iat`
and `exp`; verification requires `sub` and `exp` and accepts only HS256 (no algorithm confusion).
"""

from __future__ import annotations

import time
import unicodedata
from typing import Any

import jwt

from fleet_rlm.config import MIN_JWT_SECRET_BYTES, Settings
from fleet_rlm.errors import FleetError

DEFAULT_TTL_S = 24 * 3600
ALGORITHM = "HS256"
LEEWAY_S = 10
MAX_SUBJECT = 255
# Control, format (bidi overrides, zero-width), surrogate and private-use characters, and line separators.
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def unauthorized(message: str) -> FleetError:
    """The one 401 shape: code `unauthorized`, a one-line reason and what to do."""
    return FleetError(message, code="unauthorized", status=401)


def check_subject(name: object) -> str:
    """A token's `sub` becomes a user name: 1-255 printable characters, not blank, no control characters.

    A NUL, newline or bidi override in a name would create a look-alike user and corrupt logs and exports.
    """
    usable = (
        isinstance(name, str)
        and 0 < len(name) <= MAX_SUBJECT
        and name.strip() == name
        and not any(unicodedata.category(char) in _FORBIDDEN_CATEGORIES for char in name)
    )
    if not usable:
        raise FleetError(
            "the token's subject is not a usable user name",
            code="invalid_token_subject",
            status=401,
        )
    assert isinstance(name, str)
    return name


def _secret(settings: Settings) -> str:
    secret = settings.jwt_secret.get_secret_value() if settings.jwt_secret else ""
    if len(secret.encode()) < MIN_JWT_SECRET_BYTES:
        raise FleetError(
            "auth_mode=token needs a signing key and none is set"
            if not secret
            else f"FLEET_JWT_SECRET is shorter than {MIN_JWT_SECRET_BYTES} bytes",
            code="auth_misconfigured",
            status=503,
        )
    return secret


def mint_token(settings: Settings, user: str, ttl_s: int = DEFAULT_TTL_S) -> str:
    """An HS256 JWT for `user`, valid for `ttl_s` seconds, signed with FLEET_JWT_SECRET."""
    try:
        check_subject(user)
    except FleetError as exc:
        raise ValueError(f"user must be 1-{MAX_SUBJECT} printable characters") from exc
    if ttl_s <= 0:
        raise ValueError("ttl_s must be positive")
    now = int(time.time())
    claims = {"sub": user, "iat": now, "exp": now + int(ttl_s)}
    return jwt.encode(claims, _secret(settings), algorithm=ALGORITHM)


def verify_token(settings: Settings, token: str) -> dict[str, Any]:
    """The claims of a valid token minted with our secret; raises the 401 FleetError otherwise."""
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            _secret(settings),
            algorithms=[ALGORITHM],
            options={"require": ["sub", "exp"]},
            leeway=LEEWAY_S,
        )
    except jwt.ExpiredSignatureError as exc:
        raise unauthorized("the bearer token has expired") from exc
    except jwt.InvalidTokenError as exc:
        raise unauthorized(f"the bearer token is not valid ({exc})") from exc
    return claims
