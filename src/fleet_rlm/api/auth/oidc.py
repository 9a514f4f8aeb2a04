"""auth_mode=oidc: verify RS/PS/ES-signed JWTs against the provider's JWKS, issuer and audience.

PyJWKClient caches the key set (5 min) and refetches once for an unknown `kid` (key rotation). Its fetch is
blocking urllib, so verification runs in a worker thread. Only asymmetric algorithms are accepted: an HS256
token signed with a public key can never pass.
"""

from __future__ import annotations

import asyncio
from typing import Any

import jwt

from fleet_rlm.api.auth.tokens import LEEWAY_S, unauthorized
from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError

ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"]
JWKS_TIMEOUT_S = 10.0


class OidcVerifier:
    """One per app: holds the JWKS client (and so its key cache) for the configured provider."""

    def __init__(self, settings: Settings) -> None:
        missing = [
            name
            for name, value in (
                ("FLEET_OIDC_JWKS_URL", settings.oidc_jwks_url),
                ("FLEET_OIDC_ISSUER", settings.oidc_issuer),
                ("FLEET_OIDC_AUDIENCE", settings.oidc_audience),
            )
            if not value
        ]
        if missing:
            raise FleetError(
                f"auth_mode=oidc needs {', '.join(missing)}",
                code="auth_misconfigured",
                status=503,
            )
        assert settings.oidc_jwks_url is not None
        self.issuer = settings.oidc_issuer
        self.audience = settings.oidc_audience
        self._client = jwt.PyJWKClient(settings.oidc_jwks_url, timeout=JWKS_TIMEOUT_S)

    def verify_sync(self, token: str) -> dict[str, Any]:
        """Claims of a valid token; 401 for bad tokens, 503 when the JWKS cannot be fetched."""
        try:
            key = self._client.get_signing_key_from_jwt(token)
        except jwt.PyJWKClientConnectionError as exc:
            raise FleetError(
                "the identity provider's key set cannot be fetched",
                code="oidc_unavailable",
                status=503,
                action="check FLEET_OIDC_JWKS_URL and that the provider is reachable",
            ) from exc
        except (jwt.PyJWKClientError, jwt.InvalidTokenError) as exc:
            raise unauthorized(f"the bearer token is not valid ({exc})") from exc
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=ALGORITHMS,
                audience=self.audience,
                issuer=self.issuer,
                options={"require": ["sub", "exp", "iss", "aud"]},
                leeway=LEEWAY_S,
            )
        except jwt.ExpiredSignatureError as exc:
            raise unauthorized("the bearer token has expired") from exc
        except jwt.InvalidTokenError as exc:
            raise unauthorized(f"the bearer token is not valid ({exc})") from exc
        return claims

    async def verify(self, token: str) -> dict[str, Any]:
        return await asyncio.to_thread(self.verify_sync, token)
