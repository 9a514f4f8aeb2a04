"""`fleet-rlm profiles list|add|test|import-env`: the LLM profiles the web UI's Settings page edits, via the API."""

from __future__ import annotations

import json
import os
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from fleet_rlm.cli.connect import open_client
from fleet_rlm.cli.errors import fail, guarded
from fleet_rlm.cli.options import ServerOption

profiles_app = typer.Typer(help="LLM profiles: endpoints, models and (encrypted) keys.", no_args_is_help=True)

KEY_ENV_HELP = "Environment variable holding the API key (keys are never passed on the command line)."


def _find(client: Any, name: str) -> dict[str, Any]:
    for profile in client.get_json("/api/v1/llm-profiles")["items"]:
        if profile["name"] == name or profile["id"] == name:
            return dict(profile)
    raise fail(f"error[profile_not_found]: no profile named {name!r} — list them with `fleet-rlm profiles list`")


@profiles_app.command("list")
def list_profiles(
    as_json: bool = typer.Option(False, "--json", help="Print the profiles as JSON."),
    url_server: str | None = ServerOption,
) -> None:
    """Your profiles with their model, endpoint, masked key and bound roles."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            items = client.get_json("/api/v1/llm-profiles")["items"]
        if as_json:
            typer.echo(json.dumps(items, ensure_ascii=False))
            return
        if not items:
            typer.echo("no profiles — add one with `fleet-rlm profiles add` or `fleet-rlm profiles import-env`")
            return
        table = Table("name", "model", "api base", "key", "roles", box=None)
        for item in items:
            key = item["api_key_masked"] or ("server env" if item.get("key_source") == "server_env" else "-")
            table.add_row(item["name"], item["model"], item["api_base"] or "-", key, ", ".join(item["roles"]) or "-")
        Console(highlight=False).print(table)

    guarded(body)


@profiles_app.command("add")
def add_profile(
    name: str = typer.Argument(..., help="Unique profile name."),
    model: str = typer.Option(..., "--model", help="LiteLLM model string, e.g. openai/gpt-4o-mini."),
    api_base: str | None = typer.Option(None, "--api-base", help="OpenAI-compatible base URL."),
    api_key_env: str | None = typer.Option(None, "--api-key-env", help=KEY_ENV_HELP),
    url_server: str | None = ServerOption,
) -> None:
    """Create a profile; its key is read from an environment variable and stored encrypted."""

    def body() -> None:
        payload: dict[str, Any] = {"name": name, "model": model, "api_base": api_base}
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise fail(f"error[api_key_missing]: {api_key_env} is not set — export it, then run this again")
            payload["api_key"] = key
        with open_client(url_server, need_model=False) as client:
            created = client.request("POST", "/api/v1/llm-profiles", json=payload).json()
        typer.echo(f"added profile {created['name']} ({created['model']}), key: {created['api_key_masked'] or 'none'}")

    guarded(body)


@profiles_app.command("test")
def test_profile(
    name: str = typer.Argument(..., help="Profile name or id."),
    url_server: str | None = ServerOption,
) -> None:
    """Send one tiny completion through the profile; exit 1 with the action to take when it fails."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            profile = _find(client, name)
            result = client.request("POST", f"/api/v1/llm-profiles/{profile['id']}/test").json()
        if result["ok"]:
            typer.secho(f"ok: {result['model']} answered in {result['latency_ms']} ms", fg=typer.colors.GREEN)
            return
        action = f" — {result['action']}" if result.get("action") else ""
        raise fail(f"error[{result['error_code']}]: {result['error_message']}{action}")

    guarded(body)


@profiles_app.command("import-env")
def import_env(url_server: str | None = ServerOption) -> None:
    """Admins: create or update the `env` and `env-delegate` profiles that use the server's DSPY_LM_MODEL,
    DSPY_LLM_API_KEY, ... (the key stays on the server)."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            result = client.request("POST", "/api/v1/llm-profiles/import-env").json()
        if not result["items"]:
            typer.echo("nothing to import — set DSPY_LM_MODEL (and DSPY_LLM_API_KEY, DSPY_LM_API_BASE) first")
            return
        for item in result["items"]:
            typer.echo(f"{item['status']}: {item['name']} ({item['profile']['model']})")

    guarded(body)
