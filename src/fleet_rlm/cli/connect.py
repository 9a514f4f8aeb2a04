"""Open a `FleetClient` on a remote server (--url-server, token from FLEET_TOKEN), on the local server (started on
first use and reused, see `local_server.py`), or with FLEET_CLI_SERVER=inprocess on an in-process one.

Also owns the "no model configured" exit: both modes ask the server's /api/v1/info, so the message is the
same wherever the server runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator

import typer

from fleet_rlm.cli.client import LOCAL_ACTION, FleetClient
from fleet_rlm.cli.settings_memo import cli_settings

TOKEN_ENV = "FLEET_TOKEN"
EXIT_NOT_CONFIGURED = 2

NO_MODEL_HELP = """No language model is configured, so there is nothing to chat with yet.

Configure one with environment variables (or the same names in a .env file in this directory):

  DSPY_LM_MODEL=openai/gpt-4o-mini          the model, in LiteLLM form (provider/model)
  DSPY_LLM_API_KEY=sk-...                   the provider's API key
  DSPY_LM_API_BASE=http://localhost:8001/v1 optional: an OpenAI-compatible endpoint

Then run the command again. `fleet-rlm doctor lm` checks the configuration with one tiny completion."""

REMOTE_NO_MODEL_HELP = (
    "The server at {url} has no language model configured. Configure DSPY_LM_MODEL and DSPY_LLM_API_KEY "
    "(or DSPY_LM_API_BASE) where the server runs, restart it, and try again."
)


def _prepare_local(settings: object) -> None:
    """Predictable startup failures (data dir, database) as one-line errors before the server starts."""
    from fleet_rlm.services.startup import prepare_data_dir, prepare_database

    prepare_data_dir(settings)  # type: ignore[arg-type]

    async def _database() -> None:
        database = await prepare_database(settings)  # type: ignore[arg-type]
        await database.dispose()

    asyncio.run(_database())


@contextlib.contextmanager
def open_client(url_server: str | None, *, need_model: bool = True) -> Iterator[FleetClient]:
    """A client for `url_server`, or for an embedded server started for the duration of the block.

    With `need_model`, exit 2 with the configuration recipe when no model is configured."""
    if url_server:
        with FleetClient(url_server, os.environ.get(TOKEN_ENV) or None) as client:
            client.me()  # fail at once, on one line, when the server wants a token we do not have
            if need_model:
                require_model(client, remote=True)
            yield client
        return
    settings = cli_settings()  # the few facts needed here, without the settings model on most calls
    if need_model and not settings.model_configured:  # known before starting anything: nothing touched, same message
        typer.echo(NO_MODEL_HELP, err=True)
        raise typer.Exit(EXIT_NOT_CONFIGURED)
    if settings.cli_server == "local":
        from fleet_rlm.cli.local_server import ensure_local_server

        server = ensure_local_server(settings, notice=_notice)
        local = {"headers": server.headers, "unreachable_action": LOCAL_ACTION, "verify": False}  # http, loopback
        try:
            with FleetClient(server.base_url, **local) as client:  # type: ignore[arg-type]
                yield client
        finally:
            server.detach()
        return
    from fleet_rlm.cli.inprocess import embedded_server
    from fleet_rlm.config import load_settings

    full = load_settings()  # the app runs in this process: it needs every setting
    _prepare_local(full)
    log_file = full.logs_dir / "cli-inprocess.log"
    with embedded_server(full, log_file=log_file) as base_url, FleetClient(base_url) as client:
        yield client


def _notice(text: str) -> None:
    typer.secho(text, err=True, dim=True)


def require_model(client: FleetClient, *, remote: bool) -> None:
    """Exit with status 2 and the configuration recipe when the server has no model."""
    info = client.info()
    if (info.get("model") or {}).get("configured"):
        return
    message = REMOTE_NO_MODEL_HELP.format(url=client.base_url) if remote else NO_MODEL_HELP
    typer.echo(message, err=True)
    raise typer.Exit(EXIT_NOT_CONFIGURED)
