"""`fleet-rlm auth token --user NAME`: mint a bearer token for auth_mode=token servers (FLEET_JWT_SECRET)."""

from __future__ import annotations

import typer

from fleet_rlm.cli.errors import fail, guarded
from fleet_rlm.config import load_settings

auth_app = typer.Typer(help="Bearer tokens for servers running with FLEET_AUTH_MODE=token.", no_args_is_help=True)


@auth_app.command("token")
def token(
    user: str = typer.Option(..., "--user", help="User name the token authenticates (created on first use)."),
    ttl: int = typer.Option(24 * 3600, "--ttl", min=1, help="Lifetime in seconds."),
) -> None:
    """Print a token signed with FLEET_JWT_SECRET; clients send it as `Authorization: Bearer <token>`."""
    from fleet_rlm.api.auth.tokens import mint_token

    def body() -> None:
        settings = load_settings()
        try:
            typer.echo(mint_token(settings, user, ttl))
        except ValueError as exc:
            raise fail(f"error[invalid_input]: {exc}") from None

    guarded(body)
